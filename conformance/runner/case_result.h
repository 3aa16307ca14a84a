#pragma once
// One executed case, as the bundle, JUnit and console report it.
#include <string>
#include <utility>
#include <vector>

namespace crossdev::conformance {

// pass/fail/xfail/xpass/skip/error/crash: an xpass (expected failure that passed) gates like a fail.
enum class Status { Pass, Fail, XFail, XPass, Skip, Error, Crash };
const char* status_name(Status s) noexcept;
bool status_gates(Status s) noexcept;  // true for fail, xpass, error, crash

// Where a case executed: on a real device, on a simulated one (hypothetical host profile or
// the sim backend), or nowhere (skipped). Never report a simulated run as real.
enum class Execution { Real, Simulated, NotRun };
const char* execution_name(Execution e) noexcept;

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
