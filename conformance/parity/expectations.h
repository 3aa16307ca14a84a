#pragma once
// Per-device-kind expectations for the ops matrix: matrices/expectations/<kind>.yaml.
//
//   description: why this device has known differences   # optional
//   expectations:
//     - match: "ops.rms_norm/cpu/float16/*/fallback"      # glob over case ids
//       status: xfail                                      # xfail | skip (case_statuses.json's `expectation`)
//       reason: "fallback accumulates in float16"          # required, shown in reports
//       class: numerics                                    # optional: what kind of failure (kFailureClasses)
//
// The first entry whose glob matches a case id applies. An entry that matches no case of the
// matrix is stale (the case it was written for was renamed or removed) and is warned about.
// Every problem in a file is a YamlError "file:line: ..." (impl/yaml).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "yaml/yaml_error.h"

#include "parity/expectation_statuses.inc"  // generated from python/crossdev/case_statuses.json ("expectation")

namespace crossdev::parity {

// The statuses an entry may give a case: the table's own enumerators (XFail, Skip).
enum class ExpectedStatus {
#define CROSSDEV_EXPECTED_ENUMERATOR(enumerator, name) enumerator,
  CROSSDEV_EXPECTATION_STATUSES(CROSSDEV_EXPECTED_ENUMERATOR)
#undef CROSSDEV_EXPECTED_ENUMERATOR
};
// Their names for a message ("xfail or skip").
const std::string& expected_status_list();
// The status named `name`, or nullopt.
std::optional<ExpectedStatus> expected_status_named(std::string_view name) noexcept;

// What kind of failure an entry expects (its optional `class` key; the opinfo suite's
// `crossdev expectations accept` writes one for every entry, docs/opinfo.md).
inline constexpr const char* kFailureClasses[] = {"unimplemented", "dtype_unsupported", "numerics", "crash"};
std::string failure_class_list();  // "unimplemented, dtype_unsupported, numerics, crash"
const char* expected_status_name(ExpectedStatus s) noexcept;

struct Expectation {
  std::string match;
  ExpectedStatus status = ExpectedStatus::XFail;
  std::string reason;
  // "real" or "simulated": the entry applies only to cases executed that way ("" = both). A
  // difference of the sim backend must not expect a failure of the real device, and vice versa.
  std::string execution;
  std::string failure_class;  // "" or one of kFailureClasses
  std::string file;
  int line = 0;
  std::string where() const { return file + ":" + std::to_string(line); }
};

class ExpectationFile {
 public:
  ExpectationFile() = default;  // no expectations
  static ExpectationFile load(const std::string& path);                 // throws YamlError
  static ExpectationFile load_if_exists(const std::string& path);       // empty when the file is absent

  const std::string& path() const noexcept { return path_; }
  const std::vector<Expectation>& entries() const noexcept { return entries_; }
  // The first entry matching `case_id` (and `execution`, "real" or "simulated", when the entry
  // names one), or nullptr.
  const Expectation* find(std::string_view case_id, std::string_view execution = "") const noexcept;
  // Entries that match none of `case_ids`.
  std::vector<const Expectation*> stale(const std::vector<std::string>& case_ids) const;

 private:
  std::string path_;
  std::vector<Expectation> entries_;
};

// crossdev's one glob dialect, for expectation entries' `match`, `crossdev run --filter` and the opinfo
// suite's op selectors alike (Python: fnmatch.fnmatchcase, crossdev/opinfo/expectations.py): '*' any run
// of characters ('/' included), '?' exactly one, '[seq]' / '[!seq]' one character in / not in seq; a
// backslash is literal. POSIX fnmatch(3) with FNM_NOESCAPE.
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace crossdev::parity
