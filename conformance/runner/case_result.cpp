#include "runner/case_result.h"

namespace crossdev::conformance {

const char* status_name(Status s) noexcept {
  switch (s) {
    case Status::Pass: return "pass";
    case Status::Fail: return "fail";
    case Status::XFail: return "xfail";
    case Status::XPass: return "xpass";
    case Status::Skip: return "skip";
    case Status::Error: return "error";
    case Status::Crash: return "crash";
  }
  return "?";
}

bool status_gates(Status s) noexcept {
  return s == Status::Fail || s == Status::XPass || s == Status::Error || s == Status::Crash;
}

const char* execution_name(Execution e) noexcept {
  switch (e) {
    case Execution::Real: return "real";
    case Execution::Simulated: return "simulated";
    case Execution::NotRun: return "not_run";
  }
  return "?";
}

}  // namespace crossdev::conformance
