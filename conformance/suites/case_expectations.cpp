#include "suites/case_expectations.h"

#include <map>
#include <mutex>

namespace crossdev::conformance {

const parity::ExpectationFile& cached_expectations(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, parity::ExpectationFile> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(path);
  if (it == cache.end()) it = cache.emplace(path, parity::ExpectationFile::load_if_exists(path)).first;  // throws YamlError
  return it->second;
}

void apply_xfail(const parity::Expectation& e, CaseResult& r) {
  r.details.emplace_back("expectation", e.where() + ": xfail: " + e.reason);
  if (!e.failure_class.empty()) r.details.emplace_back("expected_class", e.failure_class);
  if (r.status == Status::Pass) {
    r.status = Status::XPass;
    r.message = "unexpected pass: " + e.where() + " expects a failure (" + e.reason + "); remove the expectation";
  } else if (r.status == Status::Fail || r.status == Status::Error || r.status == Status::Crash) {
    r.status = Status::XFail;
    r.message = "expected failure (" + e.reason + ", " + e.where() + "): " + r.message;
  }
}

}  // namespace crossdev::conformance
