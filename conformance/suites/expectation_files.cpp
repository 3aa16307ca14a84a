#include "suites/expectation_files.h"

#include <filesystem>
#include <map>
#include <mutex>

#include "device/device_kind.h"

namespace crossdev::conformance {

std::string expectations_path(const std::string& matrix_file, const std::string& suite, const std::string& kind) {
  return (std::filesystem::path(matrix_file).parent_path() / "expectations" / suite / (kind + ".yaml")).string();
}

std::string execution_of(const RunContext& ctx, const std::string& kind) {
  const auto k = kind_from_name(kind);
  if (!k) return "";
  switch (ctx.host.provenance(*k)) {
    case Provenance::Real: return "real";
    case Provenance::Simulated: return "simulated";
    default: return "";
  }
}

std::string kind_of_case(const std::string& row_id, const std::string& id, std::size_t kind_segment) {
  const std::string prefix = row_id + "/";
  if (kind_segment == 0 || id.rfind(prefix, 0) != 0) return "";
  std::size_t begin = prefix.size();
  for (std::size_t i = 1; i < kind_segment; ++i) {
    const std::size_t slash = id.find('/', begin);
    if (slash == std::string::npos) return "";
    begin = slash + 1;
  }
  const std::size_t end = id.find('/', begin);
  const std::string kind = id.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  return kind.substr(0, kind.find('@'));
}

const parity::Expectation* expectation_for(const Row& row, const std::string& suite, std::size_t kind_segment,
                                           const RunContext& ctx, const std::string& id) {
  const std::string kind = kind_of_case(row.id(), id, kind_segment);
  const std::string execution = kind.empty() ? "" : execution_of(ctx, kind);
  if (execution.empty()) return nullptr;
  return cached_expectations(expectations_path(row.file(), suite, kind)).find(id, execution);
}

const parity::ExpectationFile& cached_expectations(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, parity::ExpectationFile> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(path);
  if (it == cache.end()) it = cache.emplace(path, parity::ExpectationFile::load_if_exists(path)).first;  // throws YamlError
  return it->second;
}

namespace {

// The case status each failure class of an entry (parity::kFailureClasses) stands for, as
// `crossdev expectations accept` classifies a case (python/crossdev/expectations.py, failure_class):
// a device error, a result that differs, a dead or hung process.
constexpr struct {
  const char* failure_class;
  Status status;
} kClassStatus[] = {
    {"unimplemented", Status::Error}, {"dtype_unsupported", Status::Error}, {"numerics", Status::Fail}, {"crash", Status::Crash}};

bool class_covers(const std::string& failure_class, Status status) {
  if (failure_class.empty()) return true;
  for (const auto& row : kClassStatus)
    if (failure_class == row.failure_class) return row.status == status;
  return false;
}

}  // namespace

void apply_xfail(const parity::Expectation& e, CaseResult& r) {
  r.details.emplace_back("expectation", e.where() + ": xfail: " + e.reason);
  if (!e.failure_class.empty()) r.details.emplace_back("expected_class", e.failure_class);
  const bool failed = r.status == Status::Fail || r.status == Status::Error || r.status == Status::Crash;
  if (failed && !class_covers(e.failure_class, r.status)) {  // another failure than the one expected: it gates
    r.message = std::string("not the expected failure: ") + e.where() + " expects a " + e.failure_class + " failure (" +
                e.reason + "), the case is " + status_name(r.status) + ": " + r.message;
    return;
  }
  if (r.status == Status::Pass) {
    r.status = Status::XPass;
    r.message = "unexpected pass: " + e.where() + " expects a failure (" + e.reason + "); remove the expectation";
  } else if (r.status == Status::Fail || r.status == Status::Error || r.status == Status::Crash) {
    r.status = Status::XFail;
    r.message = "expected failure (" + e.reason + ", " + e.where() + "): " + r.message;
  }
}

}  // namespace crossdev::conformance
