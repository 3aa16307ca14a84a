// Suite `claims` (matrices/claims.yaml, docs/xla.md): a seed's claim about a device's runtime
// (inference_mode against no_grad, device strings, autocast device types, torch.compile backends,
// an error classified and recovered), observed on each device kind of the row, real where the host
// has it: torch_xla's xla on any CPU host (runner/python_runtimes.h). The claims are Python
// (python/crossdev/claims/table.py, the one list), so the rows run in the Python worker
// (runner/python_rows.h): one case per device kind; an unknown claim or an outcome the claim cannot
// observe is found by check_rows() before anything runs: exit 2 with the row's file:line.
#include <string>
#include <vector>

#include "device/device_kind.h"
#include "runner/python_rows.h"
#include "runner/suite_table.h"
#include "util/json.h"

namespace crossdev::conformance {
namespace {

constexpr double kDefaultCaseTimeoutS = 300;

void write_row(json::Writer& w, const Row& row) {
  w.begin_object();
  w.field("id", row.id());
  w.field("claim", row.str("claim"));
  w.field("expect", row.str("expect"));
  w.key("devices").begin_array();
  for (const auto& v : row.str_list("devices")) w.value(v);
  w.end_array();
  w.end_object();
}

std::string request(const char* kind, const Row& row, const RunContext& ctx, long start) {
  json::Writer w(0);
  w.begin_object();
  w.field("request", kind);
  w.field("suite", "claims");
  write_process_setup(w, ctx);
  write_worker_kinds(w, row, ctx);
  w.key("row");
  write_row(w, row);
  w.field("start", static_cast<long long>(start));
  w.end_object();
  return w.str();
}

class ClaimsSuite final : public Suite {
 public:
  const char* name() const override { return "claims"; }

  const SuiteSchema& schema() const override {
    static const SuiteSchema s{{"claim", "devices", "expect"}, {"case_timeout"}};
    return s;
  }

  void validate(const Row& row) const override {
    const auto devices = row.str_list("devices");
    if (devices.empty()) row.fail("devices", "expected at least one device kind; expected one of " + valid_kind_list());
    for (const auto& d : devices)
      if (!kind_from_name(d)) row.fail("devices", "unknown device kind '" + d + "'; expected one of " + valid_kind_list());
    if (row.has("case_timeout") && !(row.number("case_timeout") > 0)) row.fail("case_timeout", "expected seconds > 0");
  }

  // One case per device kind, `<row>/<kind>`: the ids the worker's run gives them (claims/suite.py
  // case_id; test_pytest_plugin_verdicts.py compares a plugin's planned items with a run's cases).
  // Planned here: a Python worker's start-up per row would cost more than the claims themselves.
  std::vector<PlannedCase> plan(const Row& row, const RunContext&) const override {
    std::vector<PlannedCase> cases;
    for (const auto& kind : row.str_list("devices")) cases.push_back({row.id() + "/" + kind, kind, "", "", ""});
    return cases;
  }

  void check_rows(const std::vector<const Row*>& rows, const RunContext& ctx) const override {
    if (rows.empty()) return;
    json::Writer w(0);
    w.begin_object();
    w.field("request", "check");
    w.field("suite", "claims");
    write_process_setup(w, ctx);
    w.key("rows").begin_array();
    for (const Row* row : rows) write_row(w, *row);
    w.end_array();
    w.end_object();
    check_python_rows(w.str(), rows, "claim");
  }

  std::vector<CaseResult> run(const Row& row, const RunContext& ctx) const override {
    return run_python_row(row, *this, [&](long start) { return request("run", row, ctx, start); },
                          row.number_or("case_timeout", kDefaultCaseTimeoutS));
  }
};

}  // namespace

std::unique_ptr<Suite> make_claims_suite() { return std::make_unique<ClaimsSuite>(); }

}  // namespace crossdev::conformance
