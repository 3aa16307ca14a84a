#pragma once
// A Suite validates and runs the rows of matrix files that name it (`suite: <name>`).
// Suites are listed in suite_table.cpp; adding a suite is one row there.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "device/host_profile.h"
#include "runner/matrix_types.h"
#include "runner/case_result.h"

namespace crossdev::conformance {

struct RunContext {
  RunContext() = default;
  // This host and its --simulate spec; the other fields keep their defaults (RunContext{host, ""}).
  RunContext(HostProfile host_, std::string simulate_spec_)
      : host(std::move(host_)), simulate_spec(std::move(simulate_spec_)) {}

  HostProfile host;           // this host: the real probe, plus --simulate kinds where asked
  std::string simulate_spec;  // "" when nothing is simulated
  std::vector<std::string> libraries;  // --load-library paths, for suites that run a Python worker (opinfo)
  // Why --simulate was not applied ("" when it was, or nothing was asked): a real accelerator (run_context.h).
  std::string not_simulated_reason;
  int shard_index = 1, shard_count = 1;  // --shard I/N: a suite that shards_its_cases() keeps its share
};

// A case a row will produce, known before running it: what the pytest plugin collects as an
// item. `expected` is "xfail" or "skip" when an expectation (matrices/expectations/) names the
// case on this host, with its reason and file:line.
struct PlannedCase {
  std::string id;
  std::string device_kind;  // the kind the case is about ("" when the row is not per device)
  std::string expected;
  std::string reason;
  std::string where;
};

class Suite {
 public:
  virtual ~Suite() = default;
  virtual const char* name() const = 0;
  virtual const SuiteSchema& schema() const = 0;
  // Value checks at load time (device strings, enums, list lengths). Throws YamlError.
  virtual void validate(const Row& row) const = 0;
  // Runs one row; a row may expand into several cases (e.g. one per device). Must not throw
  // for case-level problems: report them as Status::Error with the message.
  virtual std::vector<CaseResult> run(const Row& row, const RunContext& ctx) const = 0;
  // The cases run() will return for this row on ctx's host, in order, without running them.
  // Default: one case whose id is the row id. A suite whose rows expand overrides it.
  virtual std::vector<PlannedCase> plan(const Row& row, const RunContext& ctx) const;
  // Checks, before anything runs, what only a run's environment can judge (the opinfo suite asks
  // torch's op_db whether a row's names exist). `crossdev run` calls it once per suite with the
  // selected rows; throws YamlError (exit 2). Default: nothing to check.
  virtual void check_rows(const std::vector<const Row*>& rows, const RunContext& ctx) const;
  // Whether run() keeps only shard ctx.shard_index of ctx.shard_count of its cases (`crossdev run
  // --shard I/N`); the rows of a suite that does not run in shard 1 only. Default: false.
  virtual bool shards_its_cases() const { return false; }
};

const Suite* find_suite(const std::string& name);
std::string suite_names();  // for "expected one of ..." messages
const SuiteSchema* schema_for_suite(const std::string& name);

// Fills the bookkeeping fields of a result from its row.
CaseResult result_for(const Row& row, const Suite& suite);

}  // namespace crossdev::conformance
