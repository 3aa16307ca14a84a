// The one shim of every suite defined in Python (python/crossdev/python_suites.json, one record each:
// opinfo, models, claims). A record says everything the engine knows of the suite; this class does
// the rest the same way for each (runner/python_rows.h: the worker's plan, check and run):
//
//   - schema and value checks from the record's row keys, by type (suites/row_keys.h): a bad value is
//     exit 2 with its file:line before anything runs; so is what only Python can judge (an OpInfo name
//     torch lacks, a factory that does not import, an unknown claim), found by check_rows() in one
//     worker for every selected row of the suite;
//   - the worker's row: the keys marked to_worker, as their type writes them; --load-library's
//     libraries, simulated kinds and real Python runtimes set up first (write_process_setup);
//   - expectations: <matrix folder>/expectations/<suite>/<kind>.yaml (suites/expectation_files.h), with
//     the statuses the record allows: a `skip` entry is handed to the worker, which does not run the
//     case; an `xfail` entry turns the case's failure, error or crash into xfail and its pass into xpass;
//   - cases: planned by the worker, or one per device kind of the row (planned_by); isolated per case
//     (a worker that dies or exceeds the row's case_timeout makes that case a crash, and a new worker
//     resumes at the next one); kept to this shard's share when the record says the suite shards them.
#include <memory>
#include <string>
#include <vector>

#include "runner/python_rows.h"
#include "runner/python_suite_table.h"
#include "runner/suite_table.h"
#include "suites/expectation_files.h"
#include "suites/row_keys.h"
#include "util/json.h"

namespace crossdev::conformance {
namespace {

constexpr double kNoCaseTimeoutS = 300;  // a record whose case_timeout key has no default

class PythonSuite final : public Suite {
 public:
  explicit PythonSuite(const PythonSuiteSpec& spec) : spec_(spec) {
    for (const auto& k : spec_.keys) (k.required ? schema_.required : schema_.optional).push_back(k.key);
  }

  const char* name() const override { return spec_.name.c_str(); }
  const SuiteSchema& schema() const override { return schema_; }
  bool shards_its_cases() const override { return spec_.shards_its_cases; }

  void validate(const Row& row) const override {
    for (const auto& k : spec_.keys) validate_row_key(row, k);
    for (const auto& kind : row.str_list("devices")) expectations(row, kind);  // a bad file: YamlError, exit 2
  }

  std::vector<PlannedCase> plan(const Row& row, const RunContext& ctx) const override {
    std::vector<PlannedCase> cases;
    if (!spec_.planned_by_worker) {  // one case per device kind, `<row>/<kind>`: the ids the worker's run gives them
      for (const auto& kind : row.str_list("devices")) cases.push_back({row.id() + "/" + kind, kind, "", "", ""});
      return cases;
    }
    cases = plan_python_row(request("plan", row, ctx, 0), row, spec_.bad_row_key.c_str());
    for (PlannedCase& c : cases) {
      if (const parity::Expectation* e = entry_for(row, ctx, c.id)) {
        c.expected = parity::expected_status_name(e->status);
        c.reason = e->reason;
        c.where = e->where();
      }
    }
    return cases;
  }

  void check_rows(const std::vector<const Row*>& rows, const RunContext& ctx) const override {
    if (rows.empty()) return;
    json::Writer w(0);
    w.begin_object();
    w.field("request", "check");
    w.field("suite", spec_.name);
    // A lighter check module sets nothing up (it imports no torch and runs no case).
    w.field("module", spec_.check_module.empty() ? spec_.run_module : spec_.check_module);
    w.field("set_up", spec_.check_module.empty());
    write_process_setup(w, ctx);
    w.key("rows").begin_array();
    for (const Row* row : rows) write_row(w, *row);
    w.end_array();
    w.end_object();
    check_python_rows(w.str(), rows, spec_.bad_row_key.c_str());
  }

  std::vector<CaseResult> run(const Row& row, const RunContext& ctx) const override {
    const RowKeySpec* timeout = spec_.find_key("case_timeout");
    const double default_timeout_s = timeout && timeout->has_default ? timeout->default_number : kNoCaseTimeoutS;
    std::vector<CaseResult> results = run_python_row(
        row, *this,
        [&](long start, const std::string& crash_record) { return request("run", row, ctx, start, crash_record); },
        row.number_or("case_timeout", default_timeout_s), spec_.records_crashes);
    for (CaseResult& c : results) {
      if (c.status == Status::Skip) continue;  // unrun (absent device, a skip expectation, no golden)
      const parity::Expectation* e = entry_for(row, ctx, c.id);
      if (e && e->status == parity::ExpectedStatus::XFail) apply_xfail(*e, c);
    }
    return results;
  }

 private:
  bool takes_expectations() const { return !spec_.expectation_statuses.empty(); }

  // The row's expectation file for `kind`; an entry whose status the record does not allow is exit 2.
  const parity::ExpectationFile* expectations(const Row& row, const std::string& kind) const {
    if (!takes_expectations()) return nullptr;
    const parity::ExpectationFile& file = cached_expectations(expectations_path(row.file(), spec_.name, kind));
    for (const auto& e : file.entries()) {
      const std::string status = parity::expected_status_name(e.status);
      if (spec_.allows_expectation(status)) continue;
      throw YamlError(SourceLocation{e.file, e.line},
                      spec_.allows_expectation("xfail") && spec_.expectation_statuses.size() == 1
                          ? "a " + spec_.name + " expectation is xfail (the case runs, then its failure is expected); got '" + status + "'"
                          : "a " + spec_.name + " expectation is not '" + status + "'");
    }
    return &file;
  }

  const parity::Expectation* entry_for(const Row& row, const RunContext& ctx, const std::string& id) const {
    if (!takes_expectations()) return nullptr;
    return expectation_for(row, spec_.name, spec_.kind_segment, ctx, id);
  }

  void write_row(json::Writer& w, const Row& row) const {
    w.begin_object();
    w.field("id", row.id());
    for (const auto& k : spec_.keys)
      if (k.to_worker && row.has(k.key)) write_row_key(w, row, k);
    w.end_object();
  }

  // {kind: [{match, status, reason, where}]}: the entries that apply on this host, in file order, so
  // the worker skips a case whose first matching entry is `skip` without running it.
  void write_expectations(json::Writer& w, const Row& row, const RunContext& ctx) const {
    w.key("expectations").begin_object();
    for (const auto& kind : row.str_list("devices")) {
      const std::string execution = execution_of(ctx, kind);
      if (execution.empty()) continue;
      w.key(kind).begin_array();
      for (const auto& e : expectations(row, kind)->entries()) {
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

  std::string request(const char* kind, const Row& row, const RunContext& ctx, long start,
                      const std::string& crash_record = "") const {
    json::Writer w(0);
    w.begin_object();
    w.field("request", kind);
    w.field("suite", spec_.name);
    w.field("module", spec_.run_module);
    write_process_setup(w, ctx);
    write_worker_kinds(w, row, ctx);
    if (spec_.allows_expectation("skip")) write_expectations(w, row, ctx);
    if (spec_.shards_its_cases) {
      w.key("shard").begin_array();
      w.value(static_cast<long long>(ctx.shard_index)).value(static_cast<long long>(ctx.shard_count));
      w.end_array();
    }
    w.key("row");
    write_row(w, row);
    w.field("start", static_cast<long long>(start));
    if (!crash_record.empty()) w.field("crash_record", crash_record);
    w.end_object();
    return w.str();
  }

  const PythonSuiteSpec& spec_;
  SuiteSchema schema_;
};

}  // namespace

std::unique_ptr<Suite> make_python_suite(const PythonSuiteSpec& spec) { return std::make_unique<PythonSuite>(spec); }

std::vector<std::unique_ptr<Suite>> make_python_suites() {
  std::vector<std::unique_ptr<Suite>> out;
  for (const auto& spec : python_suite_specs()) out.push_back(make_python_suite(spec));
  return out;
}

}  // namespace crossdev::conformance
