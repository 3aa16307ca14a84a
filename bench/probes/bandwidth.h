#pragma once
// The measured bandwidth limit that `bw_util` divides by, probed in the bench process itself so
// the ratio compares two numbers from the same machine, threads and moment.
//   CPU:  STREAM triad a[i] = b[i] + s * c[i] over arrays far larger than the last-level cache,
//         parallel over the same ATen thread pool the kernels use; best of N timed trials
//         (STREAM's convention), counting 3 * N * sizeof(float) bytes per pass (2 reads + 1
//         write; write-allocate traffic is not counted, as in STREAM and in our op model).
//   CUDA: a device-to-device copy timed with CUDA events, counting 2 * bytes (read + write).
#include <cstdint>
#include <memory>
#include <string>

namespace crossdev::bench {

struct BandwidthMeasurement {
  std::string device;           // "cpu", "cuda:0"
  std::string method;           // "stream_triad", "cuda_d2d_copy"
  double bytes_per_second = 0;  // best trial: the peak bw_util divides by
  double median_bytes_per_second = 0;
  std::int64_t bytes_per_pass = 0;
  int trials = 0;
  int threads = 0;
};

// The STREAM triad arrays, allocated and first-touched in parallel once.
class TriadArrays {
 public:
  explicit TriadArrays(std::int64_t elements);
  ~TriadArrays();
  TriadArrays(const TriadArrays&) = delete;
  TriadArrays& operator=(const TriadArrays&) = delete;

  void run_once();  // one parallel triad pass
  std::int64_t elements() const noexcept { return n_; }
  std::int64_t bytes_per_pass() const noexcept { return 3 * n_ * static_cast<std::int64_t>(sizeof(float)); }
  float checksum_element(std::int64_t i) const noexcept { return a_[i]; }

 private:
  std::int64_t n_;
  float* a_;
  float* b_;
  float* c_;
};

// Array length for the triad: 4x the last-level cache (STREAM's rule), within [min, 4 x min].
std::int64_t triad_elements(std::int64_t min_elements);

BandwidthMeasurement probe_cpu_triad(std::int64_t elements, int trials);

// Only where the bench was built against a CUDA LibTorch and a device is present; throws otherwise.
BandwidthMeasurement probe_cuda_copy(int device_index, std::int64_t bytes, int trials);
bool cuda_probe_available() noexcept;

}  // namespace crossdev::bench
