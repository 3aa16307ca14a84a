#include "runner/case_result.h"

namespace crossdev::conformance {

const char* status_name(Status s) noexcept {
  switch (s) {
#define CROSSDEV_CASE_STATUS(enumerator, name, gates, junit) \
  case Status::enumerator: return name;
    CROSSDEV_CASE_STATUSES(CROSSDEV_CASE_STATUS)
#undef CROSSDEV_CASE_STATUS
  }
  return "?";
}

bool status_gates(Status s) noexcept {
  switch (s) {
#define CROSSDEV_CASE_STATUS(enumerator, name, gates, junit) \
  case Status::enumerator: return gates;
    CROSSDEV_CASE_STATUSES(CROSSDEV_CASE_STATUS)
#undef CROSSDEV_CASE_STATUS
  }
  return true;
}

const char* status_junit_element(Status s) noexcept {
  switch (s) {
#define CROSSDEV_CASE_STATUS(enumerator, name, gates, junit) \
  case Status::enumerator: return junit;
    CROSSDEV_CASE_STATUSES(CROSSDEV_CASE_STATUS)
#undef CROSSDEV_CASE_STATUS
  }
  return "error";
}

std::optional<Status> status_named(std::string_view text) noexcept {
#define CROSSDEV_CASE_STATUS(enumerator, name, gates, junit) \
  if (text == name) return Status::enumerator;
  CROSSDEV_CASE_STATUSES(CROSSDEV_CASE_STATUS)
#undef CROSSDEV_CASE_STATUS
  return std::nullopt;
}

const char* execution_name(Execution e) noexcept {
  switch (e) {
#define CROSSDEV_CASE_EXECUTION(enumerator, name) \
  case Execution::enumerator: return name;
    CROSSDEV_CASE_EXECUTIONS(CROSSDEV_CASE_EXECUTION)
#undef CROSSDEV_CASE_EXECUTION
  }
  return "?";
}

std::optional<Execution> execution_named(std::string_view text) noexcept {
#define CROSSDEV_CASE_EXECUTION(enumerator, name) \
  if (text == name) return Execution::enumerator;
  CROSSDEV_CASE_EXECUTIONS(CROSSDEV_CASE_EXECUTION)
#undef CROSSDEV_CASE_EXECUTION
  return std::nullopt;
}

}  // namespace crossdev::conformance
