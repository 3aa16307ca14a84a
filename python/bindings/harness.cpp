// crossdev.harness: the conformance engine of `crossdev run`, for the pytest plugin
// (python/crossdev/pytest_plugin.py). Nothing here decides a verdict: the catalog is
// load_catalog(), the host is prepare_run(), each row runs through run_row() — the functions
// `crossdev run` and its workers call — and the bundle and JUnit come from the same writers.
//
//   c = crossdev.harness.Catalog("matrices", simulate="cuda:2,mps", libraries=[...])   # YamlError: "file:line: ..."
//   c.plan()              # [{id, row_id, suite, file, line, file_index, row_index, device_kind, expected, reason, where}]
//   c.run_row(0, 3)       # ([{id, status, execution, device, message, ...}], [oplog records])
//   crossdev.harness.write_outputs("bundle.json", "", simulate, matrices, [case["record"], ...], oplog_records)
//
// An exception a user's Python op raises inside a row is that case's `error`, "ValueError: ...":
// the describer below (installed with the module) takes the Python error the op left pending.
#include <torch/csrc/Exceptions.h>
#include <torch/extension.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "manager/op_log.h"
#include "runner/bundle_writer.h"
#include "runner/worker_events.h"
#include "runner/catalog.h"
#include "runner/run_context.h"
#include "runner/runner.h"
#include "sim/sim_backend.h"
#include "suites/ops_suite.h"
#include "util/atomic_file.h"

namespace py = pybind11;

namespace crossdev::python {
namespace {

using namespace crossdev::conformance;

py::dict case_dict(const CaseResult& r) {
  py::dict d;
  d["id"] = r.id;
  d["row_id"] = r.row_id;
  d["suite"] = r.suite;
  d["status"] = status_name(r.status);
  d["execution"] = execution_name(r.execution);
  d["device"] = r.device;
  d["message"] = r.message;
  d["file"] = r.file;
  d["line"] = r.line;
  d["duration_s"] = r.duration_s;
  py::list details;
  for (const auto& [k, v] : r.details) details.append(py::make_tuple(k, v));
  d["details"] = details;
  d["record"] = case_event(r);  // the workers' event line: how a result travels to the process writing the bundle
  return d;
}

// "Type: message" of a Python exception (type, value as PyErr_Fetch gives them); "" for none.
std::string python_exception_text(PyObject* type, PyObject* value) {
  if (!type) return "";
  std::string name = reinterpret_cast<PyTypeObject*>(type)->tp_name;
  if (const auto dot = name.rfind('.'); dot != std::string::npos) name = name.substr(dot + 1);
  std::string text;
  if (value) {
    if (PyObject* str = PyObject_Str(value)) {
      Py_ssize_t size = 0;
      if (const char* utf8 = PyUnicode_AsUTF8AndSize(str, &size)) text.assign(utf8, static_cast<std::size_t>(size));
      Py_DECREF(str);
    }
    PyErr_Clear();  // a value whose str() raised: the type alone
  }
  // A message built from pybind11's what() carries the Python stack, "\n\nAt:\n  file(line): ...":
  // the case keeps the message (the bundle's message is one reason, not a traceback).
  if (const auto at = text.find("\n\nAt:\n"); at != std::string::npos) text.erase(at);
  return text.empty() ? name : name + ": " + text;
}

// conformance::describe_exception for this process (runner/run_context.h): "Type: message". A
// Python op that raises reaches C++ as torch's python_error — through the dispatcher with the
// Python error still set on this thread (what() is ""), through the autograd engine persisted
// (what() is str(value), no type) — or as pybind11's error_already_set (what() ends with the
// Python stack). The pending error is taken off the thread, so the row's next call into Python
// starts clean (left there, it surfaced as the next case's error, or as SystemError from run_row).
std::string describe_for_python(const std::exception& e) {
  try {
    if (!Py_IsInitialized()) return e.what();
    py::gil_scoped_acquire gil;
    if (const auto* pe = dynamic_cast<const py::error_already_set*>(&e)) {
      if (PyErr_Occurred()) PyErr_Clear();  // a stale one, never ours: error_already_set fetched ours
      const std::string text = python_exception_text(pe->type().ptr(), pe->value().ptr());
      return text.empty() ? std::string(e.what()) : text;
    }
    if (const auto* pe = dynamic_cast<const python_error*>(&e)) {
      auto& err = const_cast<python_error&>(*pe);
      err.persist();  // PyErr_Fetch: clears the pending error; a no-op once persisted
      const std::string text = python_exception_text(err.type, err.value);
      return text.empty() ? std::string(e.what()) : text;
    }
    if (PyErr_Occurred()) {  // some other C++ exception while a Python error was pending
      PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
      PyErr_Fetch(&type, &value, &traceback);
      PyErr_NormalizeException(&type, &value, &traceback);
      const std::string text = python_exception_text(type, value);
      Py_XDECREF(type);
      Py_XDECREF(value);
      Py_XDECREF(traceback);
      const std::string what = e.what();
      return what.empty() ? text : what + " (" + text + ")";
    }
  } catch (...) {  // never throws: the case keeps the C++ message
  }
  return e.what();
}

PreparedRun prepare(const std::string& simulate) {
  try {
    return prepare_run(simulate);
  } catch (const std::invalid_argument& e) {
    throw py::value_error(std::string("--simulate: ") + e.what());
  }
}

class Catalog {
 public:
  Catalog(const std::string& path, const std::string& simulate, const std::vector<std::string>& libraries) {
    prepared_ = prepare(simulate);
    prepared_.ctx.libraries = libraries;  // already loaded here; the Python worker of a Python suite loads them too
    files_ = load_catalog(path);  // YamlError -> crossdev.harness.YamlError
  }

  py::list files() const {
    py::list out;
    for (const auto& f : files_) out.append(py::make_tuple(f.path, f.suite, f.rows.size()));
    return out;
  }

  py::list plan() const {
    py::list out;
    for (std::size_t fi = 0; fi < files_.size(); ++fi) {
      const MatrixFile& file = files_[fi];
      const Suite* suite = find_suite(file.suite);
      for (std::size_t ri = 0; ri < file.rows.size(); ++ri) {
        const Row& row = file.rows[ri];
        for (const PlannedCase& c : suite->plan(row, prepared_.ctx)) {
          py::dict d;
          d["id"] = c.id;
          d["row_id"] = row.id();
          d["suite"] = file.suite;
          d["file"] = file.path;
          d["line"] = row.where().line;
          d["file_index"] = fi;
          d["row_index"] = ri;
          d["device_kind"] = c.device_kind;
          d["expected"] = c.expected;
          d["reason"] = c.reason;
          d["where"] = c.where;
          out.append(d);
        }
      }
    }
    return out;
  }

  // Stale expectations of the ops files ("file:line: stale expectation ...").
  std::vector<std::string> stale_warnings() const {
    std::vector<std::string> out;
    for (const auto& f : files_) {
      if (f.suite != "ops") continue;
      for (auto& w : stale_expectation_warnings(f)) out.push_back(std::move(w));
    }
    return out;
  }

  // Runs one row as a `crossdev run` worker does; returns its cases and the device-operation
  // log records it added.
  py::tuple run_row(std::size_t file_index, std::size_t row_index) const {
    if (file_index >= files_.size() || row_index >= files_[file_index].rows.size())
      throw py::index_error("no row " + std::to_string(row_index) + " in file " + std::to_string(file_index));
    const MatrixFile& file = files_[file_index];
    std::vector<CaseResult> results;
    std::vector<manager::OpLogEntry> entries;
    {
      py::gil_scoped_release release;  // a Python custom op called by the row takes the GIL itself
      const std::size_t before = manager::OpLog::global().size();
      results = conformance::run_row(*find_suite(file.suite), file.rows[row_index], prepared_.ctx);
      const auto all = manager::OpLog::global().entries();
      entries.assign(all.begin() + static_cast<std::ptrdiff_t>(std::min(before, all.size())), all.end());
    }
    py::list cases, log;
    for (const auto& r : results) cases.append(case_dict(r));
    for (const auto& e : entries) log.append(oplog_event(e));
    return py::make_tuple(cases, log);
  }

  const std::string& simulate_spec() const { return prepared_.ctx.simulate_spec; }
  const std::string& note() const { return prepared_.note; }
  std::string host_summary() const { return prepared_.ctx.host.summary(); }
  bool host_simulated() const { return prepared_.ctx.host.any_simulated(); }

 private:
  PreparedRun prepared_;
  std::vector<MatrixFile> files_;
};

// The bundle (--out) and JUnit (--junit) `crossdev run` writes for these results, replaced as
// one set; "" skips one. Results arrive as the workers' event lines (runner/worker_events.h) (from any process).
std::string write_outputs(const std::string& bundle_path, const std::string& junit_path, const std::string& simulate,
                          const std::vector<std::string>& matrices, const std::vector<std::string>& case_records,
                          const std::vector<std::string>& oplog_records, const std::string& interrupted) {
  std::vector<CaseResult> results;
  for (const auto& rec : case_records) {
    const auto event = read_event(rec);
    auto r = event ? case_from(*event) : std::nullopt;
    if (!r) throw py::value_error("malformed case record: " + rec.substr(0, 200));
    results.push_back(std::move(*r));
  }
  manager::OpLog log;
  for (const auto& rec : oplog_records)
    if (const auto event = read_event(rec))
      if (auto e = oplog_from(*event)) log.record(std::move(*e));
  const PreparedRun run = prepare(simulate);
  const std::string run_id = new_run_id();
  const ExecutionTarget target = describe_execution_target(run.ctx.host, run.ctx.simulate_spec);
  std::vector<std::pair<std::string, std::string>> outputs;
  if (!bundle_path.empty()) {
    BundleInput in;
    in.target = target;
    in.host = &run.ctx.host;
    in.matrices = matrices;
    in.cases = &results;
    in.device_log_json = log.summary_json();
    in.run_id = run_id;
    in.interrupted = interrupted;
    outputs.emplace_back(bundle_path, bundle_json(in));
  }
  if (!junit_path.empty()) outputs.emplace_back(junit_path, junit_xml(results, target, run_id));
  write_files_atomically(outputs);
  return run_id;
}

}  // namespace

void bind_harness(py::module_& parent) {
  set_exception_describer(&describe_for_python);  // rows run from this process: run_row, run_matrix
  py::module_ m = parent.def_submodule("harness", "the `crossdev run` engine for the pytest plugin");
  py::register_exception<YamlError>(m, "YamlError", PyExc_ValueError);
  py::class_<Catalog>(m, "Catalog")
      .def(py::init<const std::string&, const std::string&, const std::vector<std::string>&>(), py::arg("path"),
           py::arg("simulate") = "", py::arg("libraries") = std::vector<std::string>{},
           "Load and validate a matrix file or folder like `crossdev run --matrix PATH --simulate S --load-library L...`\n"
           "(`libraries`: paths this process has loaded; the Python worker of a Python suite loads them too).")
      .def("files", &Catalog::files, "[(path, suite, rows)]")
      .def("plan", &Catalog::plan, "every case, in run order, with its expectation on this host")
      .def("stale_warnings", &Catalog::stale_warnings)
      .def("run_row", &Catalog::run_row, py::arg("file_index"), py::arg("row_index"))
      .def_property_readonly("simulate_spec", &Catalog::simulate_spec)
      .def_property_readonly("note", &Catalog::note)
      .def_property_readonly("host_summary", &Catalog::host_summary)
      .def_property_readonly("host_simulated", &Catalog::host_simulated);
  m.def("sim_registered", &sim::backend_registered);
  m.def("prepare", [](const std::string& simulate) {
    const PreparedRun run = prepare(simulate);
    py::dict d;
    d["simulate_spec"] = run.ctx.simulate_spec;
    d["note"] = run.note;
    d["host"] = run.ctx.host.summary();
    return d;
  }, py::arg("simulate"),
        "prepare_run(): this host plus the simulated kinds; registers the sim backend only when the spec simulates a "
        "kind (and the host has no real accelerator), never otherwise");
  m.def("write_outputs", &write_outputs, py::arg("bundle"), py::arg("junit"), py::arg("simulate"), py::arg("matrices"),
        py::arg("case_records"), py::arg("oplog_records"), py::arg("interrupted") = "");
  m.def("device_kinds", [] {
    std::vector<std::string> out;
    for (DeviceKind kind : kAllDeviceKinds) out.emplace_back(kind_name(kind));
    return out;
  });
  m.def("named_hosts", [] {
    std::vector<std::string> out;
    std::string list = named_host_list();
    std::size_t start = 0;
    while (start < list.size()) {
      std::size_t end = list.find(',', start);
      if (end == std::string::npos) end = list.size();
      std::string name = list.substr(start, end - start);
      while (!name.empty() && name.front() == ' ') name.erase(0, 1);
      if (!name.empty()) out.push_back(name);
      start = end + 1;
    }
    return out;
  }, "the host profiles matrices name (cpu-only, cuda-x1, ...)");
}

}  // namespace crossdev::python
