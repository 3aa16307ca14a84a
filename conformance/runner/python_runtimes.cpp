#include "runner/python_runtimes.h"

#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <cstdlib>
#include <exception>

#include "runner/worker_events.h"
#include "runner/python_worker.h"

namespace crossdev::conformance {
namespace {

constexpr const char* kProbedVariable = "CROSSDEV_PYTHON_RUNTIMES_PROBED";
constexpr double kProbeTimeoutS = 600;  // the worker's own probe gives up after 300 s per runtime

// Every line, the empty last one included ("a\n" is two lines).
std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::size_t begin = 0;
  for (std::size_t end; (end = text.find(sep, begin)) != std::string::npos; begin = end + 1)
    out.push_back(text.substr(begin, end - begin));
  out.push_back(text.substr(begin));
  return out;
}

// One `runtime` event (crossdev/worker.py serve_runtimes): kind, status (real | absent), count, summary, reason.
void parse_line(const std::string& line, std::vector<PythonRuntimeReport>* out) {
  const auto event = read_event(line);
  if (!event || event->name != "runtime") return;
  const auto kind = kind_from_name(event->body.string_or("kind"));
  if (!kind) return;
  PythonRuntimeReport r;
  r.kind = *kind;
  r.real = event->body.string_or("status") == "real";
  r.count = static_cast<int>(event->index_or("count", 0));
  r.summary = event->body.string_or("summary");
  r.reason = event->body.string_or("reason");
  if (r.real && r.count < 1) {
    r.real = false;
    r.reason = "the runtime reported no device";
  }
  out->push_back(std::move(r));
}

std::vector<PythonRuntimeReport> run_probe(std::string* lines) {
  std::vector<PythonRuntimeReport> reports;
  try {
    PythonWorker worker("{\"request\":\"runtimes\"}");
    WorkerEvent event;
    bool done = false;
    while (worker.next_event(&event, kProbeTimeoutS) == PythonWorker::Read::Event) {
      if (event.name == "done") done = true;
      if (event.name != "runtime") continue;
      parse_line(event.line, &reports);
      *lines += event.line + "\n";
    }
    worker.finish(!done);
  } catch (const std::exception&) {
    // No interpreter with crossdev: no Python runtime either; the Python suites say why they cannot run.
  }
  return reports;
}

struct Probed {
  std::vector<PythonRuntimeReport> reports;
  std::string lines;  // as the probe wrote them, for the engine's workers
};

const Probed& probed() {
  static const Probed p = [] {
    Probed out;
    if (const char* inherited = std::getenv(kProbedVariable)) {
      out.lines = inherited;
      for (const auto& line : split(out.lines, '\n')) parse_line(line, &out.reports);
      return out;
    }
    out.reports = run_probe(&out.lines);
    if (out.lines.empty()) out.lines = "none\n";  // probed, nothing found: the workers do not ask again
    return out;
  }();
  return p;
}

}  // namespace

const std::vector<PythonRuntimeReport>& python_runtime_reports() { return probed().reports; }

void export_python_runtime_reports() { ::setenv(kProbedVariable, probed().lines.c_str(), 1); }

void attach_python_runtimes(HostProfile& host) {
  for (const auto& r : python_runtime_reports()) {
    if (!r.real || host.provenance(r.kind) == Provenance::Real) continue;
    std::vector<DeviceProperties> devices;
    for (int i = 0; i < r.count; ++i)
      devices.push_back(DeviceProperties{std::string(kind_name(r.kind)) + ":" + std::to_string(i) + " (" + r.summary + ")"});
    host.set(r.kind, r.count, Provenance::Real, std::move(devices));
  }
}

std::optional<std::string> not_in_this_process(DeviceKind kind, const HostProfile& host) {
  if (kind == DeviceKind::CPU || host.provenance(kind) != Provenance::Real) return std::nullopt;
  if (c10::impl::hasDeviceGuardImpl(kind_info(kind).c10_type)) return std::nullopt;
  return std::string(kind_name(kind)) +
         " is real on this host through a Python runtime (crossdev/runtimes.py) that this process has not imported; "
         "the Python suites (opinfo, models, claims) run on it in their worker";
}

}  // namespace crossdev::conformance
