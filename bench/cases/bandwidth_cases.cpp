// The bandwidth probe as a benchmark: the triad measured under Google Benchmark's timing, next
// to the startup peak that bw_util divides by (bw_util here = this run / that best trial).
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>

#include "cases/registration.h"

namespace crossdev::bench {
namespace {

void run_cpu_triad(benchmark::State& state, std::shared_ptr<TriadArrays>& arrays, std::int64_t elements,
                   double peak_bps) {
  if (!arrays) arrays = std::make_shared<TriadArrays>(elements);  // once: allocation and first touch
  arrays->run_once();
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    arrays->run_once();
    benchmark::ClobberMemory();
  }
  const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - start;
  using benchmark::Counter;
  const auto iterations = static_cast<std::int64_t>(state.iterations());
  state.SetBytesProcessed(iterations * arrays->bytes_per_pass());
  if (peak_bps > 0 && wall.count() > 0) {
    state.counters["bw_util"] =
        Counter(static_cast<double>(arrays->bytes_per_pass() * iterations) / wall.count() / peak_bps);
    state.counters["peak_bytes_per_second"] = Counter(peak_bps);
  }
  state.counters["bytes_per_call"] = Counter(static_cast<double>(arrays->bytes_per_pass()));
  state.counters["aten_threads"] = Counter(at::get_num_threads());
  state.SetLabel("real cpu");
}

}  // namespace

void register_bandwidth_row(const BandwidthRow& row, const RegistrationContext& ctx) {
  for (const c10::Device& device : runnable_devices(row.devices, row.header.id, ctx)) {
    if (!device.is_cpu()) {
      // The CUDA copy probe runs at startup (its result is the context's peak); a timed CUDA
      // copy case would repeat it, so it is listed as not run rather than registered twice.
      if (ctx.not_run) ctx.not_run->push_back(row.header.id + ": " + device.str() + " (peak only, see context)");
      continue;
    }
    const auto peak = ctx.peaks->find("cpu");
    const double peak_bps = peak == ctx.peaks->end() ? 0.0 : peak->second.bytes_per_second;
    const std::int64_t elements = triad_elements(ctx.triad_min_elements);
    auto arrays = std::make_shared<std::shared_ptr<TriadArrays>>();
    benchmark::RegisterBenchmark("bandwidth/stream_triad/cpu",
                                 [arrays, elements, peak_bps](benchmark::State& s) {
                                   run_cpu_triad(s, *arrays, elements, peak_bps);
                                 })
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace crossdev::bench
