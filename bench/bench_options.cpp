#include "bench_options.h"

#include <charconv>
#include <functional>
#include <optional>

namespace crossdev::bench {
namespace {

struct Flag {
  const char* name;  // without the leading "--" and the "="
  const char* value;
  const char* help;
  std::function<std::string(const std::string&, BenchOptions&)> apply;  // returns an error or ""
};

template <typename T>
std::optional<T> integer(const std::string& text, T min) {
  T v{};
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || v < min) return std::nullopt;
  return v;
}

const std::vector<Flag>& flags() {
  static const std::vector<Flag> table = {
      {"crossdev_matrix", "PATH", "bench matrix file",
       [](const std::string& v, BenchOptions& o) {
         o.matrix = v;
         return v.empty() ? std::string("expected a file path") : std::string();
       }},
      {"crossdev_profile", "default|long", "bounded pass (default) or the long pass for dedicated runners",
       [](const std::string& v, BenchOptions& o) {
         const auto p = profile_from_name(v);
         if (!p) return "unknown profile '" + v + "'; expected one of " + profile_names();
         o.profile = *p;
         return std::string();
       }},
      {"crossdev_threads", "N", "ATen intra-op threads (0 = ATen's default)",
       [](const std::string& v, BenchOptions& o) {
         const auto n = integer<int>(v, 0);
         if (!n) return "expected a non-negative integer, got '" + v + "'";
         o.threads = *n;
         return std::string();
       }},
      {"crossdev_probe_trials", "N", "timed trials of the startup bandwidth probe",
       [](const std::string& v, BenchOptions& o) {
         const auto n = integer<int>(v, 1);
         if (!n) return "expected a positive integer, got '" + v + "'";
         o.probe_trials = *n;
         return std::string();
       }},
      {"crossdev_triad_elements", "N", "minimum STREAM triad array length (floats)",
       [](const std::string& v, BenchOptions& o) {
         const auto n = integer<std::int64_t>(v, 1024);
         if (!n) return "expected an integer >= 1024, got '" + v + "'";
         o.triad_min_elements = *n;
         return std::string();
       }},
      {"crossdev_load_library", "PATH", "load a library that registers ops before the matrix is read (repeatable)",
       [](const std::string& v, BenchOptions& o) {
         o.libraries.push_back(v);
         return v.empty() ? std::string("expected a shared library path") : std::string();
       }},
  };
  return table;
}

// Google Benchmark < 1.8 reads --benchmark_min_time as a plain double; 1.8 added the "0.05s"
// spelling (and "100x" iterations). Accept the seconds spelling everywhere so scripts written
// for either version work; the iterations spelling has no older equivalent and is left alone.
std::string normalise_passthrough(const std::string& arg) {
#ifdef CROSSDEV_GBENCH_MIN_TIME_PLAIN_DOUBLE
  const std::string prefix = "--benchmark_min_time=";
  if (arg.rfind(prefix, 0) == 0 && arg.size() > prefix.size() + 1 && arg.back() == 's') {
    return arg.substr(0, arg.size() - 1);
  }
#endif
  return arg;
}

}  // namespace

ParsedArgs parse_bench_args(int argc, char** argv, const std::string& default_matrix, const char* profile_env) {
  ParsedArgs parsed;
  parsed.options.matrix = default_matrix;
  if (profile_env && *profile_env) {
    const auto p = profile_from_name(profile_env);
    if (!p) {
      parsed.error = std::string("CROSSDEV_BENCH_PROFILE='") + profile_env + "': expected one of " + profile_names();
      return parsed;
    }
    parsed.options.profile = *p;
  }
  parsed.passthrough.emplace_back(argc > 0 ? argv[0] : "crossdev_bench");
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") parsed.options.help = true;
    if (arg.rfind("--crossdev_", 0) != 0) {
      parsed.passthrough.push_back(normalise_passthrough(arg));
      continue;
    }
    const auto eq = arg.find('=');
    const std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const Flag* flag = nullptr;
    for (const Flag& f : flags()) {
      if (name == f.name) flag = &f;
    }
    if (!flag) {
      parsed.error = "unknown flag '" + arg + "'; crossdev flags are:\n" + bench_usage();
      return parsed;
    }
    if (eq == std::string::npos) {
      parsed.error = "flag --" + name + " needs a value: --" + name + "=" + flag->value;
      return parsed;
    }
    const std::string why = flag->apply(arg.substr(eq + 1), parsed.options);
    if (!why.empty()) {
      parsed.error = "--" + name + ": " + why;
      return parsed;
    }
  }
  // Profile defaults: the long pass probes harder and with larger arrays.
  const bool is_long = parsed.options.profile == Profile::Long;
  if (parsed.options.probe_trials == 0) parsed.options.probe_trials = is_long ? 20 : 8;
  if (parsed.options.triad_min_elements == 0) parsed.options.triad_min_elements = is_long ? (64 << 20) : (16 << 20);
  return parsed;
}

std::string bench_usage() {
  std::string out;
  for (const Flag& f : flags()) out += std::string("  --") + f.name + "=" + f.value + "  " + f.help + "\n";
  out += "  (env CROSSDEV_BENCH_PROFILE sets the default profile)\n";
  return out;
}

}  // namespace crossdev::bench
