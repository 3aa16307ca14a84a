// crossdev_bench: Google Benchmark cases registered from matrices/bench/bench.yaml.
// Exit codes: 0 ran, 2 bad input (flags, matrix: "file:line: ..."), 1 other failure.
#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <c10/util/StringUtil.h>
#include <benchmark/benchmark.h>
#include <torch/version.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

#include "bench_options.h"
#include "host_config.h"
#include "cases/registration.h"
#include "device/host_profile.h"
#include "spec/bench_matrix.h"
#include "probes/bandwidth.h"
#include "util/load_library.h"

namespace crossdev::bench {
namespace {

std::string format_gbps(double bytes_per_second) {
  std::ostringstream out;
  out.precision(4);
  out << bytes_per_second / 1e9;
  return out.str();
}

// The peaks bw_util divides by: CPU always (cheap, ~0.3 s); CUDA where a real device and a
// CUDA build exist. Each is also written into the JSON context, so a report can show it.
std::map<std::string, BandwidthMeasurement> probe_peaks(const BenchOptions& options, const HostProfile& host) {
  std::map<std::string, BandwidthMeasurement> peaks;
  peaks["cpu"] = probe_cpu_triad(triad_elements(options.triad_min_elements), options.probe_trials);
  if (host.provenance(DeviceKind::CUDA) == Provenance::Real && cuda_probe_available()) {
    peaks["cuda:0"] = probe_cuda_copy(0, std::int64_t{256} << 20, options.probe_trials);
  }
  return peaks;
}

void add_context(const BenchOptions& options, const std::map<std::string, BandwidthMeasurement>& peaks,
                 const std::vector<std::string>& not_run) {
  benchmark::AddCustomContext("crossdev_profile", profile_name(options.profile));
  benchmark::AddCustomContext("crossdev_matrix", options.matrix);
  benchmark::AddCustomContext("crossdev_aten_threads", std::to_string(at::get_num_threads()));
  benchmark::AddCustomContext("crossdev_libtorch", TORCH_VERSION);
  benchmark::AddCustomContext("crossdev_execution", "real");  // simulated devices are never benchmarked
  benchmark::AddCustomContext("crossdev_allocator", allocator_label());
  benchmark::AddCustomContext("crossdev_affinity", cpu_affinity());
  benchmark::AddCustomContext("crossdev_cpu_capability", at::get_cpu_capability());
  for (const auto& [device, m] : peaks) {
    const std::string key = "crossdev_peak_" + device;
    benchmark::AddCustomContext(key + "_bytes_per_second", std::to_string(m.bytes_per_second));
    benchmark::AddCustomContext(key + "_median_bytes_per_second", std::to_string(m.median_bytes_per_second));
    benchmark::AddCustomContext(key + "_method", m.method + ", best of " + std::to_string(m.trials) + " trials, " +
                                                     std::to_string(m.bytes_per_pass) + " bytes per pass");
  }
  if (!not_run.empty()) benchmark::AddCustomContext("crossdev_not_run", c10::Join("; ", not_run));
}

int run(int argc, char** argv) {
  ParsedArgs parsed = parse_bench_args(argc, argv, CROSSDEV_MATRIX_DIR "/bench/bench.yaml",
                                       std::getenv("CROSSDEV_BENCH_PROFILE"));
  if (!parsed.error.empty()) {
    std::fprintf(stderr, "crossdev_bench: %s\n", parsed.error.c_str());
    return 2;
  }
  const BenchOptions& options = parsed.options;
  if (options.help) {
    std::printf("crossdev_bench: benchmarks registered from %s\ncrossdev flags:\n%s\nbench matrix kinds:\n%s\n",
                options.matrix.c_str(), bench_usage().c_str(), bench_kind_summary().c_str());
  }
  std::vector<char*> args;
  for (std::string& arg : parsed.passthrough) args.push_back(arg.data());
  int gb_argc = static_cast<int>(args.size());
  benchmark::Initialize(&gb_argc, args.data());  // prints its own usage and exits on --help
  if (benchmark::ReportUnrecognizedArguments(gb_argc, args.data())) return 2;

  if (options.threads > 0) at::set_num_threads(options.threads);

  BenchMatrix matrix;
  try {
    (void)load_libraries(options.libraries);  // before the matrix: its rows may name their ops
    matrix = load_bench_matrix(options.matrix);
  } catch (const LoadLibraryError& e) {
    std::fprintf(stderr, "crossdev_bench: --crossdev_load_library: %s\n", e.what());
    return 2;
  } catch (const YamlError& e) {
    std::fprintf(stderr, "crossdev_bench: %s\n", e.what());
    return 2;
  }

  const HostProfile host = HostProfile::probe();
  const std::map<std::string, BandwidthMeasurement> peaks = probe_peaks(options, host);
  std::vector<std::string> not_run;
  RegistrationContext ctx;
  ctx.profile = options.profile;
  ctx.host = &host;
  ctx.peaks = &peaks;
  ctx.not_run = &not_run;
  ctx.triad_min_elements = options.triad_min_elements;
  register_matrix(matrix, ctx);
  add_context(options, peaks, not_run);
  std::fprintf(stderr, "crossdev_bench: profile %s, %d ATen threads, cpu peak %s GB/s (stream triad)\n",
               profile_name(options.profile), at::get_num_threads(), format_gbps(peaks.at("cpu").bytes_per_second).c_str());

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace
}  // namespace crossdev::bench

int main(int argc, char** argv) {
  try {
    return crossdev::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "crossdev_bench: %s\n", e.what());
    return 1;
  }
}
