#pragma once
// crossdev's own flags of crossdev_bench (Google Benchmark's --benchmark_* flags pass through).
//   --crossdev_matrix=PATH        bench matrix (default: matrices/bench/bench.yaml of the source tree)
//   --crossdev_profile=NAME       default (bounded, ~2 min on 2 cores) | long (dedicated runners);
//                                 default from $CROSSDEV_BENCH_PROFILE
//   --crossdev_threads=N          at::set_num_threads(N) for the kernels and the probe (0 = ATen's default)
//   --crossdev_probe_trials=N     timed trials of the startup bandwidth probe (best is the peak)
//   --crossdev_triad_elements=N   minimum triad array length (raised to 4x the last-level cache)
//   --crossdev_load_library=PATH  load a library that registers ops (repeatable; ':'-separated lists)
#include <cstdint>
#include <string>
#include <vector>

#include "spec/bench_values.h"

namespace crossdev::bench {

struct BenchOptions {
  std::string matrix;
  Profile profile = Profile::Default;
  int threads = 0;
  int probe_trials = 0;                 // 0: the profile's default
  std::int64_t triad_min_elements = 0;  // 0: the profile's default
  std::vector<std::string> libraries;   // --crossdev_load_library values, in order
  bool help = false;
};

struct ParsedArgs {
  BenchOptions options;
  std::vector<std::string> passthrough;  // argv[0] and everything for Google Benchmark
  std::string error;                     // non-empty: bad input (exit 2)
};

// Takes the --crossdev_* flags out of argv (by table), applies the profile defaults, and
// rewrites flag spellings this Google Benchmark version does not accept (see bench_options.cpp).
ParsedArgs parse_bench_args(int argc, char** argv, const std::string& default_matrix, const char* profile_env);

std::string bench_usage();

}  // namespace crossdev::bench
