// The per-call figure in C++ (issue 23; the Python one is bench/python/per_call.py): one call of
// crossdev::modulate at x = [2, 8, 64] through the dispatcher with a typed handle, next to one
// aten::add.Tensor on the same x, on one ATen thread. Without Python's torch.ops path in the way,
// the gap between the two is crossdev's own share of a call. Cases:
//   crossdev/modulate/typed            the dispatcher: the Autograd kernel, then the typed CPU kernel
//   crossdev/modulate/below_autograd   the typed CPU kernel alone (AutoDispatchBelowADInplaceOrView)
//   crossdev/modulate.out/below_autograd  the same, writing into a preallocated out
//   aten/add/typed                     aten::add.Tensor through a typed handle
//   aten/add/below_autograd            the same below the Autograd key
// Run: build/bin/crossdev_per_call_bench [--benchmark_repetitions=5 ...] (Google Benchmark flags).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <benchmark/benchmark.h>

#include "ops/op_spec.h"

namespace {

using Modulate = at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&);
using ModulateOutVoid = void(const at::Tensor&, const at::Tensor&, const at::Tensor&, at::Tensor&);
using ModulateOutReturning = at::Tensor&(const at::Tensor&, const at::Tensor&, const at::Tensor&, at::Tensor&);
using Add = at::Tensor(const at::Tensor&, const at::Tensor&, const at::Scalar&);

struct Inputs {
  at::Tensor x = at::randn({2, 8, 64});
  at::Tensor shift = at::randn({2, 64});
  at::Tensor scale = at::randn({2, 64});
  at::Tensor out = at::empty({2, 8, 64});
};

c10::OperatorHandle handle(const char* name, const char* overload) {
  (void)crossdev::ops::all_ops();  // links libcrossdev_ops, whose static registration defines crossdev::*
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
}

void one_thread() { at::set_num_threads(1); }

void modulate_typed(benchmark::State& state) {
  one_thread();
  const Inputs in;
  const auto op = handle("crossdev::modulate", "").typed<Modulate>();
  for (auto _ : state) benchmark::DoNotOptimize(op.call(in.x, in.shift, in.scale));
}

void modulate_below_autograd(benchmark::State& state) {
  one_thread();
  const Inputs in;
  const auto op = handle("crossdev::modulate", "").typed<Modulate>();
  at::AutoDispatchBelowADInplaceOrView below;
  for (auto _ : state) benchmark::DoNotOptimize(op.call(in.x, in.shift, in.scale));
}

void modulate_out_below_autograd(benchmark::State& state) {
  one_thread();
  Inputs in;
  const c10::OperatorHandle op = handle("crossdev::modulate", "out");
  at::AutoDispatchBelowADInplaceOrView below;
  if (op.schema().returns().empty()) {  // `-> ()`
    const auto typed = op.typed<ModulateOutVoid>();
    for (auto _ : state) typed.call(in.x, in.shift, in.scale, in.out);
  } else {
    const auto typed = op.typed<ModulateOutReturning>();
    for (auto _ : state) benchmark::DoNotOptimize(typed.call(in.x, in.shift, in.scale, in.out));
  }
}

void add_typed(benchmark::State& state) {
  one_thread();
  const Inputs in;
  const auto op = handle("aten::add", "Tensor").typed<Add>();
  for (auto _ : state) benchmark::DoNotOptimize(op.call(in.x, in.x, 1));
}

void add_below_autograd(benchmark::State& state) {
  one_thread();
  const Inputs in;
  const auto op = handle("aten::add", "Tensor").typed<Add>();
  at::AutoDispatchBelowADInplaceOrView below;
  for (auto _ : state) benchmark::DoNotOptimize(op.call(in.x, in.x, 1));
}

}  // namespace

BENCHMARK(modulate_typed)->Name("crossdev/modulate/typed");
BENCHMARK(modulate_below_autograd)->Name("crossdev/modulate/below_autograd");
BENCHMARK(modulate_out_below_autograd)->Name("crossdev/modulate.out/below_autograd");
BENCHMARK(add_typed)->Name("aten/add/typed");
BENCHMARK(add_below_autograd)->Name("aten/add/below_autograd");

BENCHMARK_MAIN();
