#pragma once
// The result bundle: versioned JSON (schema "crossdev.bundle", docs/bundle-schema.md),
// written atomically. JUnit XML for CI systems comes from the same results.
#include <string>
#include <vector>

#include "device/host_profile.h"
#include "runner/case_result.h"
#include "runner/execution_target.h"
#include "runner/runner.h"

namespace crossdev::conformance {

// 2: ops `max_ulp` is the floored ULP error (docs/parity.md) and comparison texts carry `ulp_floor=`.
// 3: "fallback" keeps one meaning (docs/ARCHITECTURE.md, Glossary): redirect action `substituted`,
//    recovery actions `move_to_cpu` / `move_to_next_device`, manager rows `mgr.chain.*`, device log
//    category `chain_step` (docs/bundle-schema.md, History).
inline constexpr int kBundleSchemaVersion = 3;

// An expectation entry that matched no case of a run that covered its whole scope (the opinfo
// suite's rule: suites/suite_expectations.h); the bundle's `stale_expectations`.
struct StaleExpectation {
  std::string where;        // "file:line" of the entry
  std::string match;
  std::string status;       // xfail | skip
  std::string reason;
  std::string device_kind;  // the expectation file's kind
  std::string suite;        // the suite whose expectation file it is (not written: the path names it)
};

struct BundleInput {
  ExecutionTarget target;
  const HostProfile* host = nullptr;
  std::vector<std::string> matrices;   // files that were run
  const std::vector<CaseResult>* cases = nullptr;
  std::string benchmarks_json;         // pre-serialised Google Benchmark JSON, "" for none
  std::string device_log_json;         // pre-serialised device-operation log summary, "" for none
  std::string run_id;                  // shared with the JUnit file of the same run; "" for none
  std::string interrupted;             // "SIGINT"/"SIGTERM" when the run was stopped early; "" otherwise
  std::vector<StaleExpectation> stale_expectations;  // written when not empty
  // A shard's entries that match none of its cases (--shard I/N: stale where all N shards list them).
  std::vector<StaleExpectation> shard_unmatched_expectations;  // written when not empty
};

std::string bundle_json(const BundleInput& input);
// run_id (when not empty) is a property of every testsuite: the bundle carries the same one.
std::string junit_xml(const std::vector<CaseResult>& cases, const ExecutionTarget& target, const std::string& run_id = "");

// A run id unique to this run: "<UTC yyyymmddThhmmssZ>-<pid>-<random hex>".
std::string new_run_id();
std::string xml_escape(const std::string& text);

}  // namespace crossdev::conformance
