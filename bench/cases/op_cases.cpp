// op x impl x dtype x size x device x pass benchmarks.
//
// Each case: portable inputs (shared by the implementations through a one-entry cache: the
// cases of one input set are registered consecutively), two untimed warm-up calls (TorchScript's
// profiling executor optimizes after its first runs), then the timed loop. Counters:
//   bytes_per_second  compulsory traffic (model/traffic_model.h) / time
//   items_per_second  output elements / time
//   bw_util           bytes_per_second / the device's measured peak (probes/bandwidth.h); above 1
//                     where the working set fits in cache (the peak is the DRAM triad)
//   allocs_per_op     global operator new calls per iteration (tensor metadata, dispatcher)
//   minflt_per_call   minor page faults per iteration (getrusage: fresh pages of a new output),
//   majflt_per_call   and major ones
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "alloc_counter.h"
#include "cases/device_clock.h"
#include "cases/registration.h"
#include "host_config.h"
#include "model/sized_inputs.h"
#include "model/traffic_model.h"

namespace crossdev::bench {
namespace {

struct OpCase {
  const ops::OpSpec* op;
  ops::Impl impl;
  at::ScalarType dtype;
  Size size;
  c10::Device device;
  Pass pass;
  std::uint64_t seed;
  double peak_bytes_per_second;  // 0 where no probe ran for the device
};

const ops::OpCall& cached_inputs(const OpCase& c) {
  static std::string key;
  static ops::OpCall call;
  const std::string wanted = std::string(c.op->name()) + "|" + std::to_string(c.size.elements) + "|" +
                             dtype_name(c.dtype) + "|" + c.device.str() + "|" + std::to_string(c.seed);
  if (wanted != key) {
    call = ops::OpCall{};  // release the previous set before building the next
    key.clear();
    call = make_sized_inputs(c.op->name(), c.size.elements, c.dtype, c.device, c.seed);
    key = wanted;
  }
  return call;
}

// Differentiable inputs as fresh autograd leaves (sharing storage with the cached inputs).
ops::OpCall with_grad_leaves(const ops::OpCall& base, const ops::OpSpec& op) {
  ops::OpCall call = base;
  for (const std::string& name : op.grad_inputs()) {
    auto it = call.tensors.find(name);
    if (it != call.tensors.end() && it->second.defined()) it->second = it->second.detach().requires_grad_(true);
  }
  return call;
}

struct Step {
  const OpCase& c;
  const ops::OpCall& call;
  at::Tensor grad_out;

  void operator()() const {
    at::Tensor out = c.op->run(c.impl, call);
    if (c.pass == Pass::Forward) {
      benchmark::DoNotOptimize(out.data_ptr());
      return;
    }
    out.backward(grad_out);
    for (const auto& [name, tensor] : call.tensors) {
      if (tensor.defined() && tensor.requires_grad()) {
        benchmark::DoNotOptimize(tensor.grad().data_ptr());
        tensor.mutable_grad() = at::Tensor();
      }
    }
  }
};

void run_op_case(benchmark::State& state, const OpCase& c) {
  ops::OpCall call;
  at::Tensor out;
  try {
    const ops::OpCall& base = cached_inputs(c);
    call = c.pass == Pass::ForwardBackward ? with_grad_leaves(base, *c.op) : base;
    at::NoGradGuard no_grad_for_probe;
    out = c.op->run(c.impl, call);  // eligibility and output shape, outside the timing
  } catch (const std::exception& e) {
    state.SkipWithError((std::string("not run: ") + e.what()).c_str());
    return;
  }
  const Traffic traffic = compulsory_traffic(*c.op, call, out, c.pass);
  const Step step{c, call, c.pass == Pass::ForwardBackward ? at::ones_like(out) : at::Tensor()};
  std::unique_ptr<DeviceClock> clock = clock_for(c.device);
  try {
    step();
    step();
    clock->synchronize();
  } catch (const std::exception& e) {
    state.SkipWithError((std::string("warm-up failed: ") + e.what()).c_str());
    return;
  }

  const std::uint64_t allocs_before = heap_allocations();
  const PageFaults faults_before = page_faults();
  for (auto _ : state) {
    clock->start();
    step();
    clock->stop(state);
  }
  const double allocs = static_cast<double>(heap_allocations() - allocs_before);
  const PageFaults faults_after = page_faults();

  using benchmark::Counter;
  const auto iterations = static_cast<std::int64_t>(state.iterations());
  state.SetBytesProcessed(iterations * traffic.bytes);
  state.SetItemsProcessed(iterations * traffic.elements);
  if (c.peak_bytes_per_second > 0) {
    // A rate counter, so Google Benchmark divides by the same time it divides bytes_per_second by
    // (real or manual time): bw_util == bytes_per_second / peak exactly. (The console prints it as
    // "x/s"; the value is a plain fraction.)
    state.counters["bw_util"] = Counter(
        static_cast<double>(traffic.bytes) * static_cast<double>(iterations) / c.peak_bytes_per_second, Counter::kIsRate);
    state.counters["peak_bytes_per_second"] = Counter(c.peak_bytes_per_second);
  }
  state.counters["bytes_per_call"] = Counter(static_cast<double>(traffic.bytes));
  state.counters["elements"] = Counter(static_cast<double>(traffic.elements));
  state.counters["allocs_per_op"] = Counter(allocs, Counter::kAvgIterations);
  state.counters["minflt_per_call"] =
      Counter(static_cast<double>(faults_after.minor - faults_before.minor), Counter::kAvgIterations);
  state.counters["majflt_per_call"] =
      Counter(static_cast<double>(faults_after.major - faults_before.major), Counter::kAvgIterations);
  state.counters["aten_threads"] = Counter(c.device.is_cpu() ? at::get_num_threads() : 0);
  state.SetLabel("real " + c.device.str());
}

}  // namespace

void register_op_row(const OpRow& row, const RegistrationContext& ctx) {
  const std::vector<c10::Device> devices = runnable_devices(row.devices, row.header.id, ctx);
  for (const Size& size : row.sizes) {
    for (at::ScalarType dtype : row.dtypes) {
      for (const c10::Device& device : devices) {
        const auto peak = ctx.peaks->find(device.is_cpu() ? "cpu" : device.str());
        const double peak_bps = peak == ctx.peaks->end() ? 0.0 : peak->second.bytes_per_second;
        for (Pass pass : row.passes) {
          for (ops::Impl impl : row.impls) {
            const OpCase c{row.op, impl, dtype, size, device, pass, row.seed, peak_bps};
            const std::string name = std::string(row.op->name()) + "/" + ops::impl_name(impl) + "/" +
                                     dtype_name(dtype) + "/" + size.label + "/" +
                                     (device.is_cpu() ? std::string("cpu") : device.str()) + "/" + pass_name(pass);
            auto* bench = benchmark::RegisterBenchmark(name.c_str(), [c](benchmark::State& s) { run_op_case(s, c); });
            if (uses_manual_time(device)) {
              bench->UseManualTime();
            } else {
              bench->UseRealTime();  // ATen's worker threads do the work: CPU time of this thread would lie
            }
            bench->Unit(benchmark::kMicrosecond);
          }
        }
      }
    }
  }
}

}  // namespace crossdev::bench
