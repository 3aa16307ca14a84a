#pragma once
// How one iteration is timed on a device. CPU work is synchronous: Google Benchmark's own
// real-time clock (UseRealTime, so the ATen thread pool's wall time counts) is right. CUDA
// launches are asynchronous: each iteration is bracketed by CUDA events and reported through
// SetIterationTime (UseManualTime), so the time is the device's, not the launch queue's.
#include <benchmark/benchmark.h>
#include <c10/core/Device.h>

#include <memory>

namespace crossdev::bench {

class DeviceClock {
 public:
  virtual ~DeviceClock() = default;
  virtual void start() {}
  virtual void stop(benchmark::State& state) {}
  virtual void synchronize() {}
  virtual bool manual_time() const noexcept { return false; }
  // Sum of the iteration times reported so far (manual-time clocks only).
  virtual double manual_seconds() const noexcept { return 0.0; }
};

// CPU: a no-op clock. CUDA (only when built against a CUDA LibTorch): an event clock.
std::unique_ptr<DeviceClock> clock_for(c10::Device device);

// Whether benchmarks on `device` must be registered with UseManualTime.
bool uses_manual_time(c10::Device device) noexcept;

}  // namespace crossdev::bench
