// Suite `opinfo` (matrices/opinfo/*.yaml, docs/opinfo.md): any op of PyTorch's OpInfo database on
// a device against the CPU in the same dtype. The rows are defined over torch's Python op_db, so
// this suite hands each row to a Python worker (runner/python_worker.h) and turns its records into
// cases, one per op x device x dtype x check:
//
//   - isolation per case: when the worker dies (a segfaulting kernel) or a case exceeds the row's
//     `case_timeout`, that case is a `crash` and a new worker resumes at the next case;
//   - bad input (a glob that selects nothing, an OpInfo name torch lacks, an unknown dtype or
//     check, op_db not importable) is found by check_rows() before anything runs: exit 2, file:line;
//   - --load-library's libraries are loaded into the worker; simulated kinds run on `sim`;
//   - expectations: <matrix folder>/expectations/opinfo/<kind>.yaml (parity/expectations.h): a
//     `skip` entry is handed to the worker, which does not run the case; an `xfail` entry turns
//     the case's failure, error or crash into xfail and its pass into xpass (case_expectations.h);
//     an entry that matches no case of a run that covered its scope is stale (opinfo_expectations.h);
//   - `tolerance` (row_tolerance below): the row's rtol/atol replace crossdev's table and op_db's
//     toleranceOverride; the engine checks the numbers, the worker the dtype names.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "device/device_kind.h"
#include "runner/python_rows.h"
#include "runner/suite_table.h"
#include "suites/case_expectations.h"
#include "suites/opinfo_expectations.h"
#include "util/json.h"

namespace crossdev::conformance {
namespace {

constexpr double kDefaultCaseTimeoutS = 300;


// {kind: [{match, status, reason, where}]}: the entries that apply on this host, in file order,
// so the worker skips a case whose first matching entry is `skip` without running it.
void write_expectations(json::Writer& w, const Row& row, const RunContext& ctx) {
  w.key("expectations").begin_object();
  for (const auto& kind : row.str_list("devices")) {
    const std::string execution = opinfo_execution_of(ctx, kind);
    if (execution.empty()) continue;
    w.key(kind).begin_array();
    for (const auto& e : cached_expectations(opinfo_expectations_path(row.file(), kind)).entries()) {
      if (!e.execution.empty() && e.execution != execution) continue;
      w.begin_object();
      w.field("match", e.match);
      w.field("status", parity::expected_status_name(e.status));
      w.field("reason", e.reason);
      w.field("where", e.where());
      w.end_object();
    }
    w.end_array();
  }
  w.end_object();
}

// `tolerance`: {rtol: R, atol: A} for every dtype of the row, or {<dtype>: {rtol: R, atol: A}, ...}
// per dtype. Both keys, as in the ops suite's rows: a lone rtol would silently keep the table's atol.
constexpr const char* kToleranceForms =
    "expected {rtol: <number>, atol: <number>} (every dtype of the row) or {<dtype>: {rtol: <number>, atol: <number>}, ...}";

bool is_all_dtypes_form(const YAML::Node& node) { return node["rtol"] || node["atol"]; }

// The (rtol, atol) of one entry; a bad entry is a YamlError at the row's `tolerance` (file:line).
std::pair<double, double> tolerance_pair(const Row& row, const YAML::Node& entry, const std::string& what) {
  if (!entry.IsMap() || entry.size() != 2 || !entry["rtol"] || !entry["atol"])
    row.fail("tolerance", what + "expected exactly {rtol: <number>, atol: <number>}; " + kToleranceForms);
  double rtol = -1, atol = -1;
  if (!YAML::convert<double>::decode(entry["rtol"], rtol) || !YAML::convert<double>::decode(entry["atol"], atol) ||
      !(rtol >= 0) || !(atol >= 0) || !std::isfinite(rtol) || !std::isfinite(atol))
    row.fail("tolerance", what + "rtol and atol must be finite numbers >= 0");
  return {rtol, atol};
}

void validate_tolerance(const Row& row) {
  if (!row.has("tolerance")) return;
  const YAML::Node& node = row.node("tolerance");
  if (!node.IsMap() || node.size() == 0) row.fail("tolerance", kToleranceForms);
  if (is_all_dtypes_form(node)) {
    tolerance_pair(row, node, "");
    return;
  }
  for (auto it = node.begin(); it != node.end(); ++it) tolerance_pair(row, it->second, it->first.Scalar() + ": ");
}

// "tolerance": {<dtype>: {"rtol", "atol"}} (the every-dtype form spelled out for the row's dtypes)
// and "tolerance_where": the row's file:line, which each case names as its tolerance's source.
void write_tolerance(json::Writer& w, const Row& row) {
  if (!row.has("tolerance")) return;
  const YAML::Node& node = row.node("tolerance");
  auto write_pair = [&](const std::string& dtype, const YAML::Node& entry) {
    const auto [rtol, atol] = tolerance_pair(row, entry, dtype + ": ");
    w.key(dtype).begin_object().field("rtol", rtol).field("atol", atol).end_object();
  };
  w.key("tolerance").begin_object();
  if (is_all_dtypes_form(node)) {
    for (const auto& dtype : row.str_list("dtypes")) write_pair(dtype, node);
  } else {
    for (auto it = node.begin(); it != node.end(); ++it) write_pair(it->first.Scalar(), it->second);
  }
  w.end_object();
  w.field("tolerance_where", row.where("tolerance").str());
}

void write_row(json::Writer& w, const Row& row) {
  w.begin_object();
  w.field("id", row.id());
  const auto globs = row.str_list("opinfo");  // one glob, or a list of them (any of which selects)
  if (globs.size() == 1) {
    w.field("opinfo", globs.front());
  } else {
    w.key("opinfo").begin_array();
    for (const auto& g : globs) w.value(g);
    w.end_array();
  }
  for (const char* key : {"exclude", "devices", "dtypes", "checks", "variants", "cpu_capabilities"}) {
    if (!row.has(key)) continue;
    w.key(key).begin_array();
    for (const auto& v : row.str_list(key)) w.value(v);
    w.end_array();
  }
  if (row.has("max_samples")) w.field("max_samples", row.integer("max_samples"));
  if (row.has("case_timeout")) w.field("case_timeout", row.number("case_timeout"));
  if (row.has("cross_machine")) w.field("cross_machine", row.boolean("cross_machine"));
  if (row.has("numerics")) w.field("numerics", row.str("numerics"));  // its values: the worker's check_rows
  write_tolerance(w, row);
  w.end_object();
}

std::string row_request(const char* request, const Row& row, const RunContext& ctx, long start) {
  json::Writer w(0);
  w.begin_object();
  w.field("request", request);
  w.field("suite", "opinfo");
  write_process_setup(w, ctx);
  write_worker_kinds(w, row, ctx);
  write_expectations(w, row, ctx);
  w.key("shard").begin_array();
  w.value(static_cast<long long>(ctx.shard_index)).value(static_cast<long long>(ctx.shard_count));
  w.end_array();
  w.key("row");
  write_row(w, row);
  w.field("start", static_cast<long long>(start));
  w.end_object();
  return w.str();
}

class OpInfoSuite final : public Suite {
 public:
  const char* name() const override { return "opinfo"; }
  bool shards_its_cases() const override { return true; }  // by a stable hash of the op's name (docs/opinfo.md)

  const SuiteSchema& schema() const override {
    static const SuiteSchema s{{"opinfo", "devices", "dtypes"},
                               {"exclude", "checks", "variants", "max_samples", "case_timeout", "tolerance", "cpu_capabilities",
                                "cross_machine", "numerics"}};
    return s;
  }

  void validate(const Row& row) const override {
    const auto globs = row.str_list("opinfo");
    if (globs.empty() || std::any_of(globs.begin(), globs.end(), [](const std::string& g) { return g.empty(); }))
      row.fail("opinfo", "expected a glob over OpInfo names, or a list of them (e.g. 'add', 'nn.functional.*')");
    const auto devices = row.str_list("devices");
    if (devices.empty()) row.fail("devices", "expected at least one device kind; expected one of " + valid_kind_list());
    for (const auto& d : devices)
      if (!kind_from_name(d)) row.fail("devices", "unknown device kind '" + d + "'; expected one of " + valid_kind_list());
    if (row.str_list("dtypes").empty()) row.fail("dtypes", "expected at least one dtype (e.g. [float32])");
    if (row.has("checks") && row.str_list("checks").empty()) row.fail("checks", "expected one or more of forward, backward");
    if (row.has("variants") && row.str_list("variants").empty()) row.fail("variants", "expected one or more of function, inplace, out, compile");
    if (row.has("exclude")) row.str_list("exclude");
    if (row.has("cpu_capabilities")) row.str_list("cpu_capabilities");  // values: the worker's check_rows
    if (row.has("cross_machine")) row.boolean("cross_machine");  // the rest: the worker's check_rows
    if (row.has("numerics")) row.str("numerics");  // parity | deployed: crossdev.numerics.MODES, the worker's check_rows
    if (row.has("max_samples") && row.integer("max_samples") < 1) row.fail("max_samples", "expected an integer >= 1");
    if (row.has("case_timeout") && !(row.number("case_timeout") > 0)) row.fail("case_timeout", "expected seconds > 0");
    validate_tolerance(row);
    for (const auto& d : devices) cached_expectations(opinfo_expectations_path(row.file(), d));  // a bad file: YamlError, exit 2
  }

  // The cases run() will return, from the worker's plan (the pytest plugin's items).
  std::vector<PlannedCase> plan(const Row& row, const RunContext& ctx) const override {
    std::vector<PlannedCase> cases = plan_python_row(row_request("plan", row, ctx, 0), row, "opinfo");
    for (PlannedCase& c : cases) {
      if (const parity::Expectation* e = opinfo_expectation_for(row, ctx, c.id)) {
        c.expected = parity::expected_status_name(e->status);
        c.reason = e->reason;
        c.where = e->where();
      }
    }
    return cases;
  }

  // One worker answers for every selected row: the values only torch's op_db can judge.
  void check_rows(const std::vector<const Row*>& rows, const RunContext& ctx) const override {
    if (rows.empty()) return;
    json::Writer w(0);
    w.begin_object();
    w.field("request", "check");
    w.field("suite", "opinfo");
    write_process_setup(w, ctx);
    w.key("rows").begin_array();
    for (const Row* row : rows) write_row(w, *row);
    w.end_array();
    w.end_object();
    check_python_rows(w.str(), rows, "opinfo");
  }

  std::vector<CaseResult> run(const Row& row, const RunContext& ctx) const override {
    std::vector<CaseResult> results =
        run_python_row(row, *this, [&](long start) { return row_request("run", row, ctx, start); },
                       row.number_or("case_timeout", kDefaultCaseTimeoutS));
    for (CaseResult& c : results) {
      if (c.status == Status::Skip) continue;  // unrun (absent device, a skip expectation, no golden)
      const parity::Expectation* e = opinfo_expectation_for(row, ctx, c.id);
      if (e && e->status == parity::ExpectedStatus::XFail) apply_xfail(*e, c);
    }
    return results;
  }
};

}  // namespace

std::unique_ptr<Suite> make_opinfo_suite() { return std::make_unique<OpInfoSuite>(); }

}  // namespace crossdev::conformance
