#include "cases/device_clock.h"

#include <stdexcept>

#ifdef CROSSDEV_BENCH_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#endif

namespace crossdev::bench {
namespace {

#ifdef CROSSDEV_BENCH_WITH_CUDA
class CudaEventClock final : public DeviceClock {
 public:
  void start() override { start_.record(at::cuda::getCurrentCUDAStream()); }
  void stop(benchmark::State& state) override {
    stop_.record(at::cuda::getCurrentCUDAStream());
    stop_.synchronize();
    const double seconds = start_.elapsed_time(stop_) / 1e3;
    total_ += seconds;
    state.SetIterationTime(seconds);
  }
  double manual_seconds() const noexcept override { return total_; }
  void synchronize() override { at::cuda::getCurrentCUDAStream().synchronize(); }
  bool manual_time() const noexcept override { return true; }

 private:
  at::cuda::CUDAEvent start_{cudaEventDefault};
  at::cuda::CUDAEvent stop_{cudaEventDefault};
  double total_ = 0.0;
};
#endif

}  // namespace

std::unique_ptr<DeviceClock> clock_for(c10::Device device) {
  if (device.is_cpu()) return std::make_unique<DeviceClock>();
#ifdef CROSSDEV_BENCH_WITH_CUDA
  if (device.is_cuda()) return std::make_unique<CudaEventClock>();
#endif
  throw std::invalid_argument("no benchmark clock for device " + device.str() +
                              " in this build (CPU, and CUDA when built against a CUDA LibTorch)");
}

bool uses_manual_time(c10::Device device) noexcept { return device.is_cuda(); }

}  // namespace crossdev::bench
