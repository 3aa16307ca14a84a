#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <new>
#include <vector>

#include <unistd.h>

#include "ops/cpu/parallel.h"  // at::parallel_for, checked to run in parallel
#include "probes/bandwidth.h"

namespace crossdev::bench {
namespace {

constexpr std::int64_t kGrain = 1 << 15;  // 128 KiB of floats per task: far above parallel_for overhead
constexpr float kScalar = 3.0f;

float* allocate_floats(std::int64_t n) {
  void* p = nullptr;
  if (posix_memalign(&p, 64, static_cast<std::size_t>(n) * sizeof(float)) != 0) throw std::bad_alloc();
  return static_cast<float*>(p);
}

void triad(float* __restrict a, const float* __restrict b, const float* __restrict c, std::int64_t begin,
           std::int64_t end) {
  for (std::int64_t i = begin; i < end; ++i) a[i] = b[i] + kScalar * c[i];
}

}  // namespace

std::int64_t triad_elements(std::int64_t min_elements) {
  long llc = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
  llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (llc <= 0) llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
  const std::int64_t by_cache = llc > 0 ? 4 * static_cast<std::int64_t>(llc) / static_cast<std::int64_t>(sizeof(float)) : 0;
  // sysconf reports the whole socket's L3 (hundreds of MiB on large server parts) even to a VM
  // slice that shares a fraction of it; past 4x the requested size the arrays only cost time.
  return std::clamp(by_cache, min_elements, 4 * min_elements);
}

TriadArrays::TriadArrays(std::int64_t elements)
    : n_(elements), a_(allocate_floats(elements)), b_(allocate_floats(elements)), c_(allocate_floats(elements)) {
  // First touch from the threads that will stream the data (page placement on NUMA hosts).
  at::parallel_for(0, n_, kGrain, [this](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      a_[i] = 0.0f;
      b_[i] = 1.0f;
      c_[i] = 2.0f;
    }
  });
}

TriadArrays::~TriadArrays() {
  std::free(a_);
  std::free(b_);
  std::free(c_);
}

void TriadArrays::run_once() {
  at::parallel_for(0, n_, kGrain, [this](std::int64_t begin, std::int64_t end) { triad(a_, b_, c_, begin, end); });
}

BandwidthMeasurement probe_cpu_triad(std::int64_t elements, int trials) {
  TriadArrays arrays(elements);
  arrays.run_once();  // warm-up: page tables, thread pool
  std::vector<double> rates;
  rates.reserve(static_cast<std::size_t>(trials));
  for (int t = 0; t < trials; ++t) {
    const auto start = std::chrono::steady_clock::now();
    arrays.run_once();
    const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
    rates.push_back(static_cast<double>(arrays.bytes_per_pass()) / seconds.count());
  }
  std::sort(rates.begin(), rates.end());
  BandwidthMeasurement m;
  m.device = "cpu";
  m.method = "stream_triad";
  m.bytes_per_second = rates.back();
  m.median_bytes_per_second = rates[rates.size() / 2];
  m.bytes_per_pass = arrays.bytes_per_pass();
  m.trials = trials;
  m.threads = at::get_num_threads();
  return m;
}

}  // namespace crossdev::bench
