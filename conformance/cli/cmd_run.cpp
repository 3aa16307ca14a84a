// crossdev run --matrix PATH... [--simulate S] [--out bundle.json] [--junit FILE] [--filter GLOB]
// Checks every input first — the matrices, the options, the embedded JSON, the output paths —
// so bad input is exit 2 before anything runs; runs the rows, printing failures as they
// happen; and always writes the bundle and JUnit it was asked for, as one set, before choosing
// the exit code: 0 pass, 1 a case gates, 2 bad input or a file that could not be written
// (the results then go elsewhere, and the message says where), 130/143 when SIGINT/SIGTERM
// stopped the run (the rows that did not run are `not_run`, "interrupted").

#include <algorithm>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <csignal>
#include <cstdlib>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "cli/commands.h"
#include "cli/embedded_json.h"
#include "cli/output_files.h"
#include "cli/host_option.h"
#include "manager/op_log.h"
#include "parity/expectations.h"
#include "runner/bundle_writer.h"
#include "runner/catalog.h"
#include "runner/child_process.h"
#include "runner/interrupt.h"
#include "runner/isolated_runner.h"
#include "runner/library_check.h"
#include "runner/python_runtimes.h"
#include "runner/run_context.h"
#include "runner/runner.h"
#include "suites/suite_expectations.h"
#include "util/data_dir.h"
#include "util/load_library.h"

namespace crossdev::cli {
namespace {

// realpath(3), not std::filesystem: LibTorch exports its own std::filesystem copies (scratch_dir.h).
bool same_file(const std::string& a, const std::string& b) {
  char ra[PATH_MAX], rb[PATH_MAX];
  return ::realpath(a.c_str(), ra) && ::realpath(b.c_str(), rb) && std::string(ra) == rb;
}

std::string default_matrix_path() {
  std::error_code ec;
  if (std::filesystem::is_directory("matrices", ec)) return "matrices";
  return builtin_matrix_dir();  // the installed package's catalog, or the build's sources
}

// Strict numbers: the whole text, no sign tricks, no trailing text.
double parse_seconds(const char* option, const std::string& text) {
  constexpr double kMaxSeconds = 86400;  // one day
  char* end = nullptr;
  errno = 0;
  // Plain decimal only: strtod would also take hex ("0x10"), "inf", "nan" and leading spaces.
  const bool decimal = !text.empty() && text.find_first_not_of("0123456789.eE+-") == std::string::npos &&
                       text.find_first_of("0123456789") != std::string::npos;
  const double v = decimal ? std::strtod(text.c_str(), &end) : NAN;
  if (end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v) || v <= 0 || v > kMaxSeconds) {
    throw UsageError(std::string(option) + ": expected seconds, a finite number > 0 and <= 86400 (1 day), got '" + text + "'");
  }
  return v;
}

std::uintmax_t parse_count(const char* option, const std::string& text, const char* expected) {
  const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  errno = 0;
  const unsigned long long v = digits ? std::strtoull(text.c_str(), nullptr, 10) : 0;
  if (!digits || errno == ERANGE) throw UsageError(std::string(option) + ": expected " + expected + ", got '" + text + "'");
  return v;
}

// "N", "NK", "NM", "NG" (binary units) -> bytes.
std::uintmax_t parse_bytes(const char* option, const std::string& text) {
  std::string number = text;
  std::uintmax_t unit = 1;
  if (!number.empty()) {
    switch (number.back()) {
      case 'K': case 'k': unit = std::uintmax_t{1} << 10; break;
      case 'M': case 'm': unit = std::uintmax_t{1} << 20; break;
      case 'G': case 'g': unit = std::uintmax_t{1} << 30; break;
      default: break;
    }
    if (unit != 1) number.pop_back();
  }
  const std::uintmax_t v = parse_count(option, number, "a size in bytes (e.g. 67108864, 64M, 1G), > 0");
  if (v == 0 || v > UINTMAX_MAX / unit) throw UsageError(std::string(option) + ": expected a size in bytes > 0, got '" + text + "'");
  return v * unit;
}

// A worker must not outlive the `crossdev run` that started it (runner/child_process.h).
void bind_worker_to_parent() { conformance::die_with_parent(kExitBadInput); }

// --import DIR (repeatable): directories the Python workers put first on sys.path, so a models
// row's factory `module:callable` is found there. They go first on this process's PYTHONPATH, in
// the order given, which the Python workers (runner/python_worker.cpp) and the isolation workers
// inherit: exactly what `PYTHONPATH=DIR crossdev run` does. A missing directory is bad input.
void put_import_paths_first(const std::vector<std::string>& dirs) {
  if (dirs.empty()) return;
  std::string joined;
  for (const std::string& dir : dirs) {
    char resolved[PATH_MAX];
    std::error_code ec;
    if (!::realpath(dir.c_str(), resolved) || !std::filesystem::is_directory(resolved, ec))
      throw UsageError("--import: '" + dir + "' is not a directory (expected a folder holding the modules of the "
                       "models rows' factories, put on the Python worker's sys.path)");
    if (std::string(resolved).find(':') != std::string::npos)
      throw UsageError("--import: '" + dir + "' contains ':', which a Python path cannot hold");
    if (!joined.empty()) joined += ':';
    joined += resolved;
  }
  const char* old = std::getenv("PYTHONPATH");
  if (old && *old) joined += std::string(":") + old;
  ::setenv("PYTHONPATH", joined.c_str(), 1);
}

// --export-samples DIR / --replay-samples DIR: the cross-machine folders of opinfo rows with
// `cross_machine: true` (docs/opinfo.md), handed to the Python worker (crossdev.opinfo.cross_machine),
// which the isolation workers start, as CROSSDEV_EXPORT_SAMPLES / CROSSDEV_REPLAY_SAMPLES (absolute).
void put_cross_machine_folders(const ParsedArgs& args) {
  ::unsetenv("CROSSDEV_EXPORT_SAMPLES");  // only the options say where: never a variable left in the shell
  ::unsetenv("CROSSDEV_REPLAY_SAMPLES");
  if (args.has("--replay-samples") && !args.has("--export-samples"))
    throw UsageError("--replay-samples needs --export-samples DIR: where this runner writes the outputs it computes "
                     "on the replayed samples");
  if (args.has("--export-samples")) {
    const std::string dir = args.get("--export-samples");
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec || !std::filesystem::is_directory(dir, ec))
      throw UsageError("--export-samples: cannot create the folder '" + dir + "' (expected a writable folder beside "
                       "the bundle)");
    ::setenv("CROSSDEV_EXPORT_SAMPLES", std::filesystem::absolute(dir).lexically_normal().c_str(), 1);
  }
  if (args.has("--replay-samples")) {
    const std::string dir = args.get("--replay-samples");
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
      throw UsageError("--replay-samples: '" + dir + "' is not a folder (expected the folder another runner's "
                       "`crossdev run --export-samples` wrote)");
    ::setenv("CROSSDEV_REPLAY_SAMPLES", std::filesystem::absolute(dir).lexically_normal().c_str(), 1);
  }
}

// The options of `crossdev run`; `to_workers`: an isolation worker is started with the same option and value.
const std::vector<OptionSpec>& run_options() {
  static const std::vector<OptionSpec> kOptions = {
      {"--matrix", "PATH", "matrix file or folder of *.yaml (default: matrices/); repeatable, one catalog"},
      {kSimulateOption.name, kSimulateOption.value, kSimulateOption.help, /*to_workers=*/true},
      {"--out", "FILE", "write the result bundle (JSON) here"},
      {"--junit", "FILE", "write JUnit XML here"},
      {"--filter", "GLOB", "run only cases whose row id matches GLOB", /*to_workers=*/true},
      {"--shard", "I/N", "run shard I of N (1 <= I <= N): opinfo rows keep the ops whose name hashes to shard I; "
                         "rows of other suites run in shard 1 only (docs/opinfo.md)", /*to_workers=*/true},
      {"--export-samples", "DIR", "opinfo rows with cross_machine: write the samples this run ran and the outputs it "
                                  "computed to DIR, beside the bundle, for `crossdev report` to compare with another "
                                  "runner's (docs/opinfo.md, \"Cross-machine\")"},
      {"--replay-samples", "DIR", "opinfo rows with cross_machine: run the samples another runner's --export-samples "
                                  "wrote to DIR instead of generating them (needs --export-samples)"},
      {"--bench-json", "FILE", "embed this Google Benchmark JSON in the bundle"},
      {"--device-log", "FILE", "embed this device-operation log summary (JSON) in the bundle"},
      {"--load-library", "PATHS", "load these shared libraries first (repeatable; each ':'-separated), e.g. a C++ "
                                  "extension that registers ops with TORCH_LIBRARY (candidate rows), or the "
                                  "test-only libcrossdev_mutants"},
      {"--import", "DIR", "put DIR first on the Python worker's sys.path (repeatable), where a models row's "
                          "factory module:callable is found, as PYTHONPATH=DIR does"},
      {"--quiet", nullptr, "print only failures, one progress line per suite and the summary"},
      {"--no-isolate", nullptr, "run rows in this process (default: worker processes, so a crash is one `crash` case)"},
      {"--row-timeout", "S", "seconds before a hanging row is killed and reported as crash (default 600; > 0, <= 86400)"},
      {"--max-matrix-bytes", "N", "largest matrix or embedded JSON file read (default 64M; K/M/G suffixes)",
       /*to_workers=*/true},
      {"--worker", nullptr, "internal: run as an isolation worker writing results to fd 3"},
      {"--start-row", "N", "internal: first row for a worker"},
      {"--help", nullptr, "show this help"}};
  return kOptions;
}

// --load-library: checked first in a child process (`crossdev load-check`, util/load_library.h): a library
// whose static initialisers throw (a taken TORCH_LIBRARY namespace, the same extension twice) would abort
// this process; there it is one line of bad input. Workers skip the check: their parent checked the same
// libraries. Before the matrices load: candidate rows name ops these libraries register.
std::vector<std::string> load_libraries(const ParsedArgs& args, conformance::RunContext& ctx) {
  try {
    const std::vector<std::string> paths = split_library_lists(args.get_all("--load-library"));
    if (!paths.empty() && !args.has("--worker")) {
      std::vector<std::string> check = {"/proc/self/exe", "load-check"};
      if (!ctx.simulate_spec.empty()) check.insert(check.end(), {"--simulate", ctx.simulate_spec});
      check.insert(check.end(), paths.begin(), paths.end());
      conformance::check_libraries_in_child(check);
    }
    ctx.libraries = load_library_paths(paths);
    return ctx.libraries;
  } catch (const LoadLibraryError& e) {
    throw UsageError(std::string("--load-library: ") + e.what());
  }
}

// --shard I/N into the run context.
void apply_shard(const ParsedArgs& args, conformance::RunContext& ctx) {
  if (!args.has("--shard")) return;
  const std::string spec = args.get("--shard");
  const std::size_t slash = spec.find('/');
  char* end_i = nullptr;
  char* end_n = nullptr;
  const long i = slash == std::string::npos ? 0 : std::strtol(spec.c_str(), &end_i, 10);
  const long n = slash == std::string::npos ? 0 : std::strtol(spec.c_str() + slash + 1, &end_n, 10);
  if (slash == std::string::npos || end_i != spec.c_str() + slash || *end_n != '\0' || n < 1 || n > 100000 || i < 1 || i > n)
    throw UsageError("--shard '" + spec + "': expected I/N with 1 <= I <= N <= 100000 (e.g. 1/4)");
  ctx.shard_index = static_cast<int>(i);
  ctx.shard_count = static_cast<int>(n);
}

// The rows this run runs: every --matrix in the order given (one catalog), less what --filter and the
// shard leave out.
struct Selection {
  std::vector<conformance::MatrixFile> files;
  std::vector<std::string> paths;       // every matrix loaded, for the bundle
  std::set<std::string> whole_files;    // the files --filter took no row from (stale expectations are judged on them)
  std::size_t rows = 0;                 // rows selected before the shard
};

Selection select_rows(const ParsedArgs& args, const conformance::RunContext& ctx, std::uintmax_t max_bytes) {
  using namespace crossdev::conformance;
  Selection sel;
  std::vector<std::string> matrix_paths = args.get_all("--matrix");
  if (matrix_paths.empty()) matrix_paths.push_back(default_matrix_path());
  std::string matrix_path;  // for messages: 'a', 'b'
  for (const auto& path : matrix_paths) {
    std::vector<MatrixFile> files = load_catalog(path, max_bytes);  // YamlError -> exit 2 in main
    for (auto& f : files) {
      for (const auto& earlier : sel.files)
        if (same_file(earlier.path, f.path))
          throw UsageError("--matrix: '" + f.path + "' is selected twice (by '" + path + "' and an earlier --matrix)");
      sel.files.push_back(std::move(f));
    }
    matrix_path += (matrix_path.empty() ? "" : "', '") + path;
  }
  for (const auto& f : sel.files) sel.paths.push_back(f.path);
  for (const auto& file : sel.files) sel.whole_files.insert(file.path);
  if (args.has("--filter")) {  // in place: a 280k-row catalog is not copied
    const std::string glob = args.get("--filter");
    for (auto& file : sel.files) {
      std::vector<Row> keep;
      for (auto& row : file.rows)
        if (parity::glob_match(glob, row.id())) keep.push_back(std::move(row));  // the one glob dialect
      if (keep.size() != file.rows.size()) sel.whole_files.erase(file.path);
      file.rows = std::move(keep);
    }
  }
  for (const auto& file : sel.files) sel.rows += file.rows.size();
  if (sel.rows > 0 && ctx.shard_index != 1) {  // a suite that does not shard its cases runs in shard 1
    for (auto& file : sel.files)
      if (!find_suite(file.suite)->shards_its_cases()) file.rows.clear();
  }
  if (sel.rows == 0) {
    throw UsageError(args.has("--filter") ? "nothing selected: --filter '" + args.get("--filter") + "' matches no row id in '" +
                                                matrix_path + "'"
                                          : "nothing selected: the matrices in '" + matrix_path + "' have no rows");
  }
  return sel;
}

// How the isolation workers are started: this executable, the options marked to_workers, and the
// libraries as this process resolved them.
conformance::IsolationOptions worker_options(const ParsedArgs& args, const std::vector<std::string>& libraries,
                                             double row_timeout_s) {
  conformance::IsolationOptions iso;
  iso.executable = std::filesystem::read_symlink("/proc/self/exe").string();
  for (const OptionSpec& option : run_options()) {
    if (!option.to_workers || !args.has(option.name)) continue;
    iso.extra_args.push_back(option.name);
    iso.extra_args.push_back(args.get(option.name));
  }
  for (const std::string& library : libraries) {
    iso.extra_args.push_back("--load-library");
    iso.extra_args.push_back(library);
  }
  iso.row_timeout_s = row_timeout_s;
  return iso;
}

// Writes everything asked for, as one set, before the exit code is decided (nothing computed is lost),
// and returns that exit code.
int write_and_finish(const ParsedArgs& args, const conformance::RunContext& ctx, const Selection& sel,
                     const std::vector<conformance::CaseResult>& results, const conformance::RunSummary& summary,
                     const std::string& bench_json, const std::string& log_json, const std::string& run_id) {
  using namespace crossdev::conformance;
  const int stopped_by = stop_signal();
  // Expectation entries this run proves stale (only where it ran every row they could match); a shard's
  // are only unmatched within its ops (stale where every shard lists them: the report folds them).
  std::vector<StaleExpectation> stale = unmatched_expectations(sel.files, sel.whole_files, results, ctx, stopped_by != 0);
  std::vector<StaleExpectation> shard_unmatched;
  if (ctx.shard_count > 1) shard_unmatched.swap(stale);
  for (const StaleExpectation& s : stale) std::cout << "crossdev run: warning: " << describe_stale(s) << "\n";
  ExecutionTarget target = describe_execution_target(ctx.host, ctx.simulate_spec);
  if (ctx.shard_count > 1) target.shard = std::to_string(ctx.shard_index) + "/" + std::to_string(ctx.shard_count);
  std::vector<OutputFile> outputs;
  if (args.has("--out")) {
    // The device-operation log of this run (workers stream their entries to this process),
    // unless a summary was handed in with --device-log.
    const std::string device_log = log_json.empty() ? manager::OpLog::global().summary_json() : log_json;
    const std::string interrupted = stopped_by == SIGINT ? "SIGINT" : stopped_by == SIGTERM ? "SIGTERM" : "";
    BundleInput in{target, &ctx.host, sel.paths, &results, bench_json, device_log, run_id, interrupted, stale, shard_unmatched};
    outputs.push_back({"--out", args.get("--out"), bundle_json(in)});
  }
  if (args.has("--junit")) outputs.push_back({"--junit", args.get("--junit"), junit_xml(results, target, run_id)});
  const std::string write_failure = write_outputs(outputs, run_id);
  if (write_failure.empty()) {
    for (const auto& o : outputs) std::cout << (o.option == "--out" ? "bundle: " : "junit: ") << o.path << "\n";
  }
  std::cout << summary.line() << "\n";
  std::cout.flush();
  if (!write_failure.empty()) {
    std::cerr << "crossdev run: error: " << write_failure << "\n";
    return kExitBadInput;
  }
  if (stopped_by != 0) {
    std::cerr << "crossdev run: interrupted by " << (stopped_by == SIGINT ? "SIGINT" : "SIGTERM")
              << "; the rows that did not finish are reported as not_run\n";
    return 128 + stopped_by;
  }
  return summary.gates() ? kExitConformanceFailure : kExitPass;
}

// --quiet's progress: one line per suite, its rows with results / its rows, the cases so far, the time since
// the suite began and an estimate of the rest (from the rows done). On a terminal the line is rewritten in
// place (a failing case's line is printed above it); otherwise it is printed once, as a plain line, when the
// next suite begins or the run ends. The rows run in the order of the files, so a suite's rows are together.
class SuiteProgress {
 public:
  SuiteProgress(const std::vector<conformance::MatrixFile>& files, bool terminal) : terminal_(terminal) {
    for (const auto& file : files) totals_[file.suite] += file.rows.size();
    began_ = std::chrono::steady_clock::now();
  }

  void add(const conformance::CaseResult& r) {
    if (r.suite != suite_) {
      finish();
      suite_ = r.suite;
      rows_.clear();
      cases_ = 0;
    }
    rows_.insert(r.row_id);
    ++cases_;
    if (!terminal_) return;
    const auto now = std::chrono::steady_clock::now();
    if (rows_.size() != drawn_rows_ || now - drawn_ >= std::chrono::milliseconds(250)) draw(now);
  }

  // Before a line of its own (a failing case): the progress line makes room, and comes back at the next case.
  void clear() {
    if (terminal_ && shown_) std::cout << "\r\033[K";
    shown_ = false;
  }

  // The current suite's line, for good (before the next suite's, and before the summary).
  void finish() {
    if (suite_.empty()) return;
    const auto now = std::chrono::steady_clock::now();
    if (terminal_) {
      draw(now);
      std::cout << "\n";
    } else {
      std::cout << line(now) << "\n";
    }
    std::cout.flush();
    shown_ = false;
    suite_.clear();
    began_ = now;
  }

 private:
  std::string line(std::chrono::steady_clock::time_point now) const {
    const double elapsed = std::chrono::duration<double>(now - began_).count();
    const std::size_t total = totals_.count(suite_) ? totals_.at(suite_) : rows_.size();
    std::ostringstream out;
    out << "  " << suite_ << ": rows " << rows_.size() << "/" << total << ", " << cases_ << " case"
        << (cases_ == 1 ? "" : "s") << ", " << static_cast<long>(elapsed) << " s";
    // The row in progress is counted as done: the estimate is of the rows not started yet.
    if (rows_.size() < total && !rows_.empty())
      out << ", about " << static_cast<long>(elapsed / rows_.size() * (total - rows_.size())) << " s left";
    return out.str();
  }

  void draw(std::chrono::steady_clock::time_point now) {
    std::cout << "\r\033[K" << line(now);
    std::cout.flush();
    shown_ = true;
    drawn_ = now;
    drawn_rows_ = rows_.size();
  }

  bool terminal_;
  std::map<std::string, std::size_t> totals_;
  std::string suite_;
  std::set<std::string> rows_;
  std::size_t cases_ = 0;
  std::chrono::steady_clock::time_point began_, drawn_;
  std::size_t drawn_rows_ = 0;
  bool shown_ = false;
};

}  // namespace

// The steps, in order: options; the run context (host, sim, Python runtimes); libraries; the shard; the
// rows; checks only the environment can judge; then either a worker's rows or the whole run, its
// outputs and its exit code.
int cmd_run(const std::vector<std::string>& argv) {
  using namespace crossdev::conformance;
  const std::vector<OptionSpec>& kOptions = run_options();
  const ParsedArgs args = parse_args(argv, kOptions);
  if (args.has("--help")) {
    std::cout << "usage: crossdev run [--matrix PATH] [--simulate S] [--out bundle.json] [--junit FILE]\n\n"
                 "Runs conformance matrices on this host's devices. Exit codes: 0 all pass, 1 a case failed\n"
                 "(fail, xpass, error or crash), 2 bad input or a file that cannot be read or written (the\n"
                 "message names the path and what was expected), 130/143 stopped by SIGINT/SIGTERM (the bundle\n"
                 "holds what ran; the rest is not_run, \"interrupted\").\n\n"
              << format_options(kOptions);
    return kExitPass;
  }
  if (!args.positional.empty()) throw UsageError("unexpected argument '" + args.positional[0] + "' (use --matrix PATH)");
  if (!args.has("--worker")) put_import_paths_first(args.get_all("--import"));  // workers inherit PYTHONPATH
  if (!args.has("--worker")) put_cross_machine_folders(args);  // workers inherit the environment

  PreparedRun prepared;
  try {
    prepared = prepare_run(simulate_spec(args));  // the sim backend is registered here (runner/run_context.h)
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  export_python_runtime_reports();  // the isolation workers inherit the probe instead of repeating it
  // Said once, by the parent: its isolation workers prepare the same host and would repeat it.
  if (!prepared.note.empty() && !args.has("--worker")) std::cerr << "crossdev run: " << prepared.note << "\n";
  RunContext& ctx = prepared.ctx;
  const std::vector<std::string> libraries = load_libraries(args, ctx);
  apply_shard(args, ctx);
  if (args.has("--worker")) bind_worker_to_parent();

  // Every option is checked before anything is read or run.
  const std::uintmax_t max_bytes =
      args.has("--max-matrix-bytes") ? parse_bytes("--max-matrix-bytes", args.get("--max-matrix-bytes")) : kDefaultMaxMatrixBytes;
  const double row_timeout_s = args.has("--row-timeout") ? parse_seconds("--row-timeout", args.get("--row-timeout")) : 600.0;
  const std::size_t start_row =
      args.has("--start-row") ? static_cast<std::size_t>(parse_count("--start-row", args.get("--start-row"), "a row index (0, 1, ...)")) : 0;
  Selection sel = select_rows(args, ctx, max_bytes);
  const std::string bench_json =
      args.has("--bench-json") ? load_embedded_json("--bench-json", args.get("--bench-json"), EmbeddedKind::Benchmarks, max_bytes) : "";
  const std::string log_json =
      args.has("--device-log") ? load_embedded_json("--device-log", args.get("--device-log"), EmbeddedKind::DeviceLog, max_bytes) : "";

  if (!args.has("--worker")) {  // what only the run's environment can judge (e.g. OpInfo names): exit 2 now
    for (const auto& file : sel.files) {
      std::vector<const Row*> rows;
      for (const auto& row : file.rows) rows.push_back(&row);
      find_suite(file.suite)->check_rows(rows, ctx);
    }
  }

  if (args.has("--worker")) {
    if (sel.files.size() != 1) throw UsageError("--worker runs exactly one matrix file");
    return run_worker(sel.files.front(), ctx, start_row, 3);
  }

  // Output paths: writable, room for the results (about 1 MiB plus 4 KiB a row), no stale temporaries.
  const std::uintmax_t needed = (std::uintmax_t{1} << 20) + 4096 * sel.rows + bench_json.size() + log_json.size();
  for (const char* option : {"--out", "--junit"})
    if (args.has(option)) check_output_path(option, args.get(option), needed);
  const std::string run_id = new_run_id();
  install_stop_handlers();

  const bool quiet = args.has("--quiet");
  std::cout << "crossdev run: host " << ctx.host.summary() << (ctx.host.any_simulated() ? " [includes SIMULATED]" : "")
            << "\n";
  RunSummary summary;
  std::optional<SuiteProgress> progress;  // --quiet: one line per suite (SuiteProgress)
  if (quiet) progress.emplace(sel.files, ::isatty(STDOUT_FILENO) == 1);
  const ResultCallback print = [&](const CaseResult& r) {
    summary.add(r);
    // --quiet prints the cases that gate (the table's `gates`: fail, xpass, error, crash); an xfail is expected
    if (!quiet || status_gates(r.status)) {
      if (progress) progress->clear();
      std::cout << "  " << status_name(r.status) << (r.execution == Execution::Simulated ? " [simulated] " : " ")
                << r.id << (r.message.empty() ? "" : ": " + r.message) << "\n";
    }
    if (progress) progress->add(r);
  };
  const std::vector<CaseResult> results = args.has("--no-isolate")
                                              ? run_catalog(sel.files, ctx, print)
                                              : run_isolated(sel.files, worker_options(args, libraries, row_timeout_s), print);
  if (progress) progress->finish();
  return write_and_finish(args, ctx, sel, results, summary, bench_json, log_json, run_id);
}

}  // namespace crossdev::cli
