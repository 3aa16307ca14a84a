// Suite `models` (matrices/models/*.yaml, docs/models.md): a model built by a Python factory
// (`module:callable` returning (model, inputs)) compared on each device kind with the CPU golden,
// forward outputs and every parameter's gradient, with the culprit layer and ATen op named when a
// comparison fails. The rows are Python, so they run in the Python worker (runner/python_rows.h):
// one case per device kind x dtype; a factory that does not import, raises or returns the wrong
// thing is found by check_rows() before anything runs: exit 2 with the row's file:line, as is an
// unknown `numerics` mode (the worker's check knows the modes: python/crossdev/numerics.py).
#include <string>
#include <vector>

#include <filesystem>

#include "device/device_kind.h"
#include "runner/python_rows.h"
#include "suites/case_expectations.h"
#include "suites/opinfo_expectations.h"
#include "runner/suite_table.h"
#include "util/json.h"

namespace crossdev::conformance {
namespace {

// <matrix folder>/expectations/models/<kind>.yaml: `xfail` entries for a device's genuine differences
// (docs/models.md), applied to a case's result as the ops and opinfo suites apply theirs
// (case_expectations.h). A case id is "<row>/<kind>/<dtype>".
std::string models_expectations_path(const std::string& matrix_file, const std::string& kind) {
  return (std::filesystem::path(matrix_file).parent_path() / "expectations" / "models" / (kind + ".yaml")).string();
}

const parity::ExpectationFile& models_expectations(const Row& row, const std::string& kind) {
  const parity::ExpectationFile& file = cached_expectations(models_expectations_path(row.file(), kind));  // bad: exit 2
  for (const auto& e : file.entries())
    if (e.status != parity::ExpectedStatus::XFail)
      throw YamlError(SourceLocation{e.file, e.line},
                      "a models expectation is xfail (the case runs, then its failure is expected); got '" +
                          std::string(parity::expected_status_name(e.status)) + "'");
  return file;
}

constexpr double kDefaultCaseTimeoutS = 300;

void write_row(json::Writer& w, const Row& row) {
  w.begin_object();
  w.field("id", row.id());
  w.field("model", row.str("model"));
  for (const char* key : {"devices", "dtypes", "checks"}) {
    if (!row.has(key)) continue;
    w.key(key).begin_array();
    for (const auto& v : row.str_list(key)) w.value(v);
    w.end_array();
  }
  if (row.has("steps")) w.field("steps", row.integer("steps"));
  if (row.has("seed_policy")) w.field("seed_policy", row.str("seed_policy"));
  if (row.has("recover")) w.field("recover", row.boolean("recover"));
  // parity | deployed: judged by the worker's check (crossdev/numerics.py MODES, the one list of modes)
  if (row.has("numerics")) w.field("numerics", row.str("numerics"));
  w.end_object();
}

std::string request(const char* kind, const Row& row, const RunContext& ctx, long start) {
  json::Writer w(0);
  w.begin_object();
  w.field("request", kind);
  w.field("suite", "models");
  write_process_setup(w, ctx);
  write_worker_kinds(w, row, ctx);
  w.key("row");
  write_row(w, row);
  w.field("start", static_cast<long long>(start));
  w.end_object();
  return w.str();
}

class ModelsSuite final : public Suite {
 public:
  const char* name() const override { return "models"; }

  const SuiteSchema& schema() const override {
    static const SuiteSchema s{{"model", "devices", "dtypes"}, {"checks", "steps", "case_timeout", "seed_policy", "recover", "numerics"}};
    return s;
  }

  void validate(const Row& row) const override {
    const std::string model = row.str("model");
    if (model.find(':') == std::string::npos)
      row.fail("model", "expected a factory 'module:callable' (e.g. crossdev_examples.dit:tiny_dit_block)");
    const auto devices = row.str_list("devices");
    if (devices.empty()) row.fail("devices", "expected at least one device kind; expected one of " + valid_kind_list());
    for (const auto& d : devices)
      if (!kind_from_name(d)) row.fail("devices", "unknown device kind '" + d + "'; expected one of " + valid_kind_list());
    if (row.str_list("dtypes").empty()) row.fail("dtypes", "expected at least one dtype (e.g. [float32])");
    if (row.has("checks") && row.str_list("checks").empty()) row.fail("checks", "expected one or more of forward, backward, train");
    if (row.has("steps") && row.integer("steps") < 1) row.fail("steps", "expected an integer >= 1 (optimizer steps of the train check)");
    if (row.has("case_timeout") && !(row.number("case_timeout") > 0)) row.fail("case_timeout", "expected seconds > 0");
    if (row.has("seed_policy") && row.str("seed_policy") != "none" && row.str("seed_policy") != "same_mask")
      row.fail("seed_policy", "unknown seed policy '" + row.str("seed_policy") + "'; expected one of none, same_mask");
    if (row.has("recover")) row.boolean("recover");  // a YAML boolean, else file:line: expected ...
    for (const auto& d : devices) models_expectations(row, d);  // a bad expectations file: exit 2
  }

  std::vector<PlannedCase> plan(const Row& row, const RunContext& ctx) const override {
    return plan_python_row(request("plan", row, ctx, 0), row, "model");
  }

  // One worker builds every selected row's factory once: what only Python can judge.
  void check_rows(const std::vector<const Row*>& rows, const RunContext& ctx) const override {
    if (rows.empty()) return;
    json::Writer w(0);
    w.begin_object();
    w.field("request", "check");
    w.field("suite", "models");
    write_process_setup(w, ctx);
    w.key("rows").begin_array();
    for (const Row* row : rows) write_row(w, *row);
    w.end_array();
    w.end_object();
    check_python_rows(w.str(), rows, "model");
  }

  std::vector<CaseResult> run(const Row& row, const RunContext& ctx) const override {
    std::vector<CaseResult> results =
        run_python_row(row, *this, [&](long start) { return request("run", row, ctx, start); },
                       row.number_or("case_timeout", kDefaultCaseTimeoutS));
    for (CaseResult& c : results) {
      if (c.status == Status::Skip || c.id.rfind(row.id() + "/", 0) != 0) continue;  // unrun, or the row's own error
      const std::string rest = c.id.substr(row.id().size() + 1);
      const std::string kind = rest.substr(0, rest.find('/'));
      const std::string execution = opinfo_execution_of(ctx, kind);  // "real" / "simulated" / "" (absent)
      if (execution.empty()) continue;
      if (const parity::Expectation* e = models_expectations(row, kind).find(c.id, execution)) apply_xfail(*e, c);
    }
    return results;
  }
};

}  // namespace

std::unique_ptr<Suite> make_models_suite() { return std::make_unique<ModelsSuite>(); }

}  // namespace crossdev::conformance
