#pragma once
// One executed case, as the bundle, JUnit and console report it.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runner/case_statuses.inc"  // generated from python/crossdev/case_statuses.json

namespace crossdev::conformance {

// pass/fail/xfail/xpass/skip/error/crash, as python/crossdev/case_statuses.json lists them (the one table:
// Python reads it, C++ is generated from it). An xpass (expected failure that passed) gates like a fail.
enum class Status {
#define CROSSDEV_CASE_STATUS(enumerator, name, gates, junit) enumerator,
  CROSSDEV_CASE_STATUSES(CROSSDEV_CASE_STATUS)
#undef CROSSDEV_CASE_STATUS
};
const char* status_name(Status s) noexcept;
bool status_gates(Status s) noexcept;            // the table's `gates`: fail, xpass, error, crash
const char* status_junit_element(Status s) noexcept;  // "failure", "error", "skipped" or "" (pass)
std::optional<Status> status_named(std::string_view name) noexcept;

// Where a case executed: on a real device, on a simulated one (hypothetical host profile or
// the sim backend), or nowhere (skipped). Never report a simulated run as real.
enum class Execution {
#define CROSSDEV_CASE_EXECUTION(enumerator, name) enumerator,
  CROSSDEV_CASE_EXECUTIONS(CROSSDEV_CASE_EXECUTION)
#undef CROSSDEV_CASE_EXECUTION
};
const char* execution_name(Execution e) noexcept;
std::optional<Execution> execution_named(std::string_view name) noexcept;

// Every status and execution in the table's order (the bundle's summary counts them in this order).
#define CROSSDEV_CASE_STATUS(enumerator, name, gates, junit) Status::enumerator,
inline constexpr Status kAllStatuses[] = {CROSSDEV_CASE_STATUSES(CROSSDEV_CASE_STATUS)};
#undef CROSSDEV_CASE_STATUS
#define CROSSDEV_CASE_EXECUTION(enumerator, name) Execution::enumerator,
inline constexpr Execution kAllExecutions[] = {CROSSDEV_CASE_EXECUTIONS(CROSSDEV_CASE_EXECUTION)};
#undef CROSSDEV_CASE_EXECUTION

struct CaseResult {
  std::string id;        // row id, plus "/<variant>" when a row expands into several cases
  std::string row_id;
  std::string suite;
  std::string source;    // seed or upstream reference of the row
  std::string intent;
  std::string file;
  int line = 0;
  Status status = Status::Pass;
  std::string device;    // device the case ran on ("cpu", "cuda:0", ...)
  Execution execution = Execution::Real;
  std::string message;   // why it failed / was skipped / is xfail
  std::vector<std::pair<std::string, double>> metrics;
  std::vector<std::pair<std::string, std::string>> details;  // expected/actual and other facts
  // Structured results a Python suite attaches (models: the error along the depth, the losses per
  // step): one serialised JSON object written verbatim as the case's `data`, or "" for none.
  std::string data_json;
  double duration_s = 0.0;
};

}  // namespace crossdev::conformance
