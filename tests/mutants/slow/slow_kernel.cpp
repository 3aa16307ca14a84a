// Test-only: crossdev::<op>'s CPU kernels, right but about twice as slow. Loading the library
// (libcrossdev_test_slow_kernel_<op>.so; peer_bench.py --load-library, torch.ops.load_library)
// registers, under the CPU key, over the production kernels of
//   crossdev::<op>            the production forward (ops/library: native_forward) run twice
//   crossdev::<op>.out        the production .out kernel (native_forward_out) run twice, into `out`
//   crossdev::<op>_backward   the production backward kernel run twice
// and returns the last run's result: the same values as the production kernels, twice their work.
// The op is CROSSDEV_SLOW_OP (tests/mutants/slow/CMakeLists.txt); an op with a training mode (a
// random mask) is refused, since a second run would draw again.
//
// The production backward is a boxed kernel the op table registers (register_native_backward); to
// call it from under the override, the library registers it a second time for a copy of the
// backward's schema in its own namespace, crossdev_test_slow_kernel_<op>, and calls that copy's
// CPU kernel. The namespace also has calls() -> int: how many calls the slow kernels have served
// (each kernel counts one), so a test can tell that the override really ran.
//
// Not a mutant of libcrossdev_mutants (mutants.h): every mutant there must fail the parity checks,
// and this library must pass them. It proves the benchmark baseline comparison instead
// (docs/benchmarks.md, "A slowed op, measured").
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <torch/library.h>

#include "ops/library/call_marshal.h"
#include "ops/library/op_schemas.h"
#include "ops/library/register_op.h"
#include "ops/op_definition.h"

#ifndef CROSSDEV_SLOW_OP
#error "CROSSDEV_SLOW_OP (the op whose CPU kernels are slowed) must be defined"
#endif
#define CROSSDEV_SLOW_STRINGIFY_(x) #x
#define CROSSDEV_SLOW_STRINGIFY(x) CROSSDEV_SLOW_STRINGIFY_(x)

namespace {

namespace library = crossdev::ops::library;
using crossdev::ops::OpCall;
using crossdev::ops::OpDefinition;

constexpr const char* kOp = CROSSDEV_SLOW_STRINGIFY(CROSSDEV_SLOW_OP);
constexpr int kRuns = 2;  // production kernel runs per call; the last one's result is returned
std::atomic<std::int64_t> g_calls{0};

std::string shadow_namespace() { return std::string("crossdev_test_slow_kernel_") + kOp; }

const OpDefinition& definition() {
  static const OpDefinition* const def = [] {
    const OpDefinition* d = crossdev::ops::find_definition(kOp);
    TORCH_CHECK(d != nullptr, "crossdev_test_slow_kernel: crossdev has no op '", kOp, "'");
    TORCH_CHECK(!library::has_training_mode(*d), "crossdev_test_slow_kernel: ", kOp,
                " has a training mode (a random mask): running it twice would draw twice");
    return d;
  }();
  return *def;
}

// crossdev::<op>: the production forward, kRuns times.
void slow_forward(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const std::size_t n = op.schema().arguments().size();
  OpCall call = library::call_from_arguments(op.schema(), torch::jit::last(*stack, n));
  torch::jit::drop(*stack, n);
  at::Tensor result;
  for (int run = 0; run < kRuns; ++run) result = library::native_forward(definition(), c10::DispatchKey::CPU, call);
  g_calls.fetch_add(1, std::memory_order_relaxed);
  stack->emplace_back(std::move(result));
}

// crossdev::<op>.out: the production .out kernel, kRuns times into the same `out`.
void slow_forward_out(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::FunctionSchema& schema = op.schema();
  const std::size_t n = schema.arguments().size();
  const auto arguments = torch::jit::last(*stack, n);
  OpCall call = library::call_from_arguments(schema, arguments);  // skips `out`
  const std::optional<int> out_index = schema.argumentIndexWithName("out");
  TORCH_CHECK(out_index.has_value(), "crossdev_test_slow_kernel: ", schema.name(), ".out has no `out` argument");
  const at::Tensor out = arguments[static_cast<std::size_t>(*out_index)].toTensor();
  torch::jit::drop(*stack, n);
  for (int run = 0; run < kRuns; ++run) library::native_forward_out(definition(), c10::DispatchKey::CPU, call, out);
  g_calls.fetch_add(1, std::memory_order_relaxed);
  if (!schema.returns().empty()) stack->emplace_back(out);
}

// crossdev::<op>_backward: the production backward kernel (registered for the shadow copy of its
// schema), kRuns times on the same arguments.
void slow_backward(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  static const c10::OperatorHandle production = c10::Dispatcher::singleton().findSchemaOrThrow(
      (shadow_namespace() + "::" + library::backward_name(definition())).c_str(), "");
  const std::size_t n = op.schema().arguments().size();
  const std::vector<c10::IValue> arguments(stack->end() - static_cast<std::ptrdiff_t>(n), stack->end());
  torch::jit::drop(*stack, n);
  torch::jit::Stack results;
  for (int run = 0; run < kRuns; ++run) {
    results = arguments;  // the kernel pops its arguments and pushes the gradients
    production.callBoxedForDispatchKey(c10::DispatchKey::CPU, results);
  }
  g_calls.fetch_add(1, std::memory_order_relaxed);
  for (c10::IValue& grad : results) stack->push_back(std::move(grad));
}

// The registrations, made when the library loads and removed when it unloads (as TORCH_LIBRARY's).
class SlowKernels {
 public:
  SlowKernels()
      : shadow_(torch::Library::DEF, shadow_namespace(), std::nullopt, __FILE__, __LINE__),
        shadow_cpu_(torch::Library::IMPL, shadow_namespace(), c10::DispatchKey::CPU, __FILE__, __LINE__),
        slow_(torch::Library::IMPL, "crossdev", c10::DispatchKey::CPU, __FILE__, __LINE__) {
    const OpDefinition& def = definition();
    shadow_.def(library::backward_schema(def).c_str());
    shadow_.def("calls() -> int", [] { return g_calls.load(std::memory_order_relaxed); });
    library::register_native_backward(shadow_cpu_, def, c10::DispatchKey::CPU);
    slow_.impl(kOp, torch::CppFunction::makeFromBoxedFunction<&slow_forward>());
    slow_.impl((std::string(kOp) + ".out").c_str(), torch::CppFunction::makeFromBoxedFunction<&slow_forward_out>());
    slow_.impl(library::backward_name(def).c_str(), torch::CppFunction::makeFromBoxedFunction<&slow_backward>());
  }

 private:
  torch::Library shadow_;      // crossdev_test_slow_kernel_<op>: <op>_backward's schema, calls()
  torch::Library shadow_cpu_;  // the production backward kernel, for that schema
  torch::Library slow_;        // the slow kernels over crossdev::<op>'s CPU kernels
};

const SlowKernels g_slow_kernels;

}  // namespace
