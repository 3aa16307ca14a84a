// CUDA device-to-device copy probe, timed with CUDA events. Compiled with real code only when
// the bench is built against a CUDA LibTorch (CROSSDEV_BENCH_WITH_CUDA); the CPU-only build
// keeps the declarations and reports the probe as unavailable.
#include "probes/bandwidth.h"

#include <stdexcept>

#ifdef CROSSDEV_BENCH_WITH_CUDA
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>

#include <algorithm>
#include <vector>
#endif

namespace crossdev::bench {

#ifdef CROSSDEV_BENCH_WITH_CUDA

bool cuda_probe_available() noexcept { return at::cuda::is_available(); }

BandwidthMeasurement probe_cuda_copy(int device_index, std::int64_t bytes, int trials) {
  c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device_index));
  const auto options = at::TensorOptions().dtype(at::kByte).device(at::kCUDA, device_index);
  at::Tensor src = at::ones({bytes}, options);
  at::Tensor dst = at::empty({bytes}, options);
  dst.copy_(src);  // warm-up
  std::vector<double> rates;
  for (int t = 0; t < trials; ++t) {
    at::cuda::CUDAEvent start(cudaEventDefault), stop(cudaEventDefault);
    auto stream = at::cuda::getCurrentCUDAStream();
    start.record(stream);
    dst.copy_(src);
    stop.record(stream);
    stop.synchronize();
    const double seconds = start.elapsed_time(stop) / 1e3;
    rates.push_back(2.0 * static_cast<double>(bytes) / seconds);
  }
  std::sort(rates.begin(), rates.end());
  BandwidthMeasurement m;
  m.device = "cuda:" + std::to_string(device_index);
  m.method = "cuda_d2d_copy";
  m.bytes_per_second = rates.back();
  m.median_bytes_per_second = rates[rates.size() / 2];
  m.bytes_per_pass = 2 * bytes;
  m.trials = trials;
  m.threads = 0;
  return m;
}

#else

bool cuda_probe_available() noexcept { return false; }

BandwidthMeasurement probe_cuda_copy(int, std::int64_t, int) {
  throw std::runtime_error("the CUDA copy probe was not built: this bench binary links a CPU-only LibTorch");
}

#endif

}  // namespace crossdev::bench
