// crossdev run --matrix PATH [--simulate S] [--out bundle.json] [--junit FILE] [--filter GLOB]
// Loads and validates every matrix first (bad input: exit 2 before anything runs), runs the
// rows, prints failures as they happen, and always writes the bundle and JUnit it was asked
// for — atomically — before choosing the exit code (1 if any case gates, else 0).
#include <dlfcn.h>

#include <algorithm>
#include <fnmatch.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/host_option.h"
#include "manager/op_log.h"
#include "runner/bundle_writer.h"
#include "runner/catalog.h"
#include "runner/isolated_runner.h"
#include "sim/sim_backend.h"
#include "runner/runner.h"
#include "util/atomic_file.h"

namespace crossdev::cli {
namespace {

std::string default_matrix_path() {
  std::error_code ec;
  if (std::filesystem::is_directory("matrices", ec)) return "matrices";
#ifdef CROSSDEV_MATRIX_DIR
  return CROSSDEV_MATRIX_DIR;
#else
  return "matrices";
#endif
}

// dlopen()s each library of a ':'-separated list, RTLD_GLOBAL so the ops it registers can call
// each other; a library that does not load is bad input naming the path and the loader's reason.
std::vector<std::string> load_libraries(const std::string& list) {
  std::vector<std::string> loaded;
  std::size_t start = 0;
  while (start <= list.size() && !list.empty()) {
    const std::size_t end = std::min(list.find(':', start), list.size());
    const std::string path = list.substr(start, end - start);
    start = end + 1;
    if (path.empty()) continue;
    if (dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      const char* why = dlerror();
      throw UsageError("--load-library: cannot load '" + path + "': " + (why != nullptr ? why : "unknown error") +
                       "; expected a shared library (.so) built against this LibTorch");
    }
    loaded.push_back(path);
  }
  return loaded;
}

// The first device kind other than the CPU that this host really has ("" if none).
std::string real_accelerator(const HostProfile& host) {
  for (DeviceKind kind : kAllDeviceKinds) {
    if (kind != DeviceKind::CPU && host.provenance(kind) == Provenance::Real) return kind_name(kind);
  }
  return "";
}

std::string read_optional_json(const ParsedArgs& args, const char* option) {
  if (!args.has(option)) return "";
  std::ifstream in(args.get(option));
  if (!in) throw UsageError(std::string(option) + ": cannot read '" + args.get(option) + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || (text[first] != '{' && text[first] != '['))
    throw UsageError(std::string(option) + ": '" + args.get(option) + "' is not a JSON document");
  return text;
}

}  // namespace

int cmd_run(const std::vector<std::string>& argv) {
  using namespace crossdev::conformance;
  static const std::vector<OptionSpec> kOptions = {
      {"--matrix", "PATH", "matrix file or folder of *.yaml (default: matrices/)"},
      kSimulateOption,
      {"--out", "FILE", "write the result bundle (JSON) here"},
      {"--junit", "FILE", "write JUnit XML here"},
      {"--filter", "GLOB", "run only cases whose row id matches GLOB"},
      {"--bench-json", "FILE", "embed this Google Benchmark JSON in the bundle"},
      {"--device-log", "FILE", "embed this device-operation log summary (JSON) in the bundle"},
      {"--load-library", "PATHS", "load these shared libraries first (':'-separated), e.g. a C++ extension that "
                                  "registers ops with TORCH_LIBRARY, or the test-only libcrossdev_mutants"},
      {"--quiet", nullptr, "print only failures and the summary"},
      {"--no-isolate", nullptr, "run rows in this process (default: worker processes, so a crash is one `crash` case)"},
      {"--row-timeout", "S", "seconds before a hanging row is killed and reported as crash (default 600)"},
      {"--worker", nullptr, "internal: run as an isolation worker writing results to fd 3"},
      {"--start-row", "N", "internal: first row for a worker"},
      {"--help", nullptr, "show this help"}};
  const ParsedArgs args = parse_args(argv, kOptions);
  if (args.has("--help")) {
    std::cout << "usage: crossdev run [--matrix PATH] [--simulate S] [--out bundle.json] [--junit FILE]\n\n"
                 "Runs conformance matrices on this host's devices. Exit codes: 0 all pass, 1 a case failed\n"
                 "(fail, xpass, error or crash), 2 bad input (the message names file:line).\n\n"
              << format_options(kOptions);
    return kExitPass;
  }
  if (!args.positional.empty()) throw UsageError("unexpected argument '" + args.positional[0] + "' (use --matrix PATH)");

  RunContext ctx{host_for(args), simulate_spec(args)};
  const std::string accelerator = real_accelerator(ctx.host);
  if (accelerator.empty()) {
    // Register the sim backend before anything can start LibTorch's autograd engine: the engine
    // sizes its per-device queues once, from the backends registered at that moment.
    sim::register_backend();
  } else if (ctx.host.any_simulated()) {
    // Once a PrivateUse1 backend is registered, at::getAccelerator() names it instead of the real
    // one, and backward on the real device fails inside the autograd engine (its nodes look for
    // the accelerator's stream). A real device is worth more than simulated ones: run without them.
    std::cerr << "crossdev run: not simulating (" << ctx.simulate_spec << "): this host has a real " << accelerator
              << ", and registering the sim backend would make PyTorch's autograd engine treat sim as the "
                 "accelerator and break backward on the real "
              << accelerator << "; the simulated kinds are not run\n";
    ctx = RunContext{HostProfile::probe(), ""};
  }
  const std::vector<std::string> libraries = load_libraries(args.get("--load-library"));

  const std::string matrix_path = args.get("--matrix", default_matrix_path());
  const std::vector<MatrixFile> catalog = load_catalog(matrix_path);  // MatrixError -> exit 2 in main
  const std::string bench_json = read_optional_json(args, "--bench-json");
  const std::string log_json = read_optional_json(args, "--device-log");

  std::vector<MatrixFile> selected = catalog;
  if (args.has("--filter")) {
    const std::string glob = args.get("--filter");
    for (auto& file : selected) {
      std::vector<Row> keep;
      for (auto& row : file.rows)
        if (fnmatch(glob.c_str(), row.id().c_str(), 0) == 0) keep.push_back(row);
      file.rows = std::move(keep);
    }
  }

  if (args.has("--worker")) {
    if (selected.size() != 1) throw UsageError("--worker runs exactly one matrix file");
    const long start = std::stol(args.get("--start-row", "0"));
    return run_worker(selected.front(), ctx, static_cast<std::size_t>(start), 3);
  }

  const bool quiet = args.has("--quiet");
  std::cout << "crossdev run: host " << ctx.host.summary() << (ctx.host.any_simulated() ? " [includes SIMULATED]" : "")
            << "\n";
  RunSummary summary;
  const ResultCallback print = [&](const CaseResult& r) {
    summary.add(r);
    const bool loud = r.status != Status::Pass && r.status != Status::Skip;
    if (loud || !quiet) {
      std::cout << "  " << status_name(r.status) << (r.execution == Execution::Simulated ? " [simulated] " : " ")
                << r.id << (r.message.empty() ? "" : ": " + r.message) << "\n";
    }
  };
  std::vector<CaseResult> results;
  if (args.has("--no-isolate")) {
    results = run_catalog(selected, ctx, print);
  } else {
    IsolationOptions iso;
    iso.executable = std::filesystem::read_symlink("/proc/self/exe").string();
    if (args.has("--simulate")) iso.extra_args = {"--simulate", args.get("--simulate")};
    if (!libraries.empty()) {
      iso.extra_args.push_back("--load-library");
      iso.extra_args.push_back(args.get("--load-library"));
    }
    if (args.has("--filter")) {
      iso.extra_args.push_back("--filter");
      iso.extra_args.push_back(args.get("--filter"));
    }
    if (args.has("--row-timeout")) {
      try {
        iso.row_timeout_s = std::stod(args.get("--row-timeout"));
      } catch (const std::exception&) {
        throw UsageError("--row-timeout: expected seconds, got '" + args.get("--row-timeout") + "'");
      }
    }
    results = run_isolated(selected, iso, print);
  }

  // Write everything we were asked for before deciding the exit code: nothing computed is lost.
  ExecutionTarget target = describe_execution_target(ctx.host, ctx.simulate_spec);
  std::vector<std::string> files;
  for (const auto& f : catalog) files.push_back(f.path);
  if (args.has("--out")) {
    // The device-operation log of this run (workers stream their entries to this process),
    // unless a summary was handed in with --device-log.
    const std::string device_log = log_json.empty() ? manager::OpLog::global().summary_json() : log_json;
    BundleInput in{target, &ctx.host, files, &results, bench_json, device_log};
    write_file_atomically(args.get("--out"), bundle_json(in));
    std::cout << "bundle: " << args.get("--out") << "\n";
  }
  if (args.has("--junit")) {
    write_file_atomically(args.get("--junit"), junit_xml(results, target));
    std::cout << "junit: " << args.get("--junit") << "\n";
  }
  std::cout << summary.line() << "\n";
  return summary.gates() ? kExitConformanceFailure : kExitPass;
}

}  // namespace crossdev::cli
