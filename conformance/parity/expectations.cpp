#include "parity/expectations.h"

#include <fnmatch.h>

#include <filesystem>
#include <set>

#include "yaml/yaml_document.h"

namespace crossdev::parity {
namespace {

using yaml::line_of;

struct StatusName {
  const char* name;
  ExpectedStatus status;
};
constexpr StatusName kStatusNames[] = {
#define CROSSDEV_EXPECTED_NAME(enumerator, name) {name, ExpectedStatus::enumerator},
    CROSSDEV_EXPECTATION_STATUSES(CROSSDEV_EXPECTED_NAME)
#undef CROSSDEV_EXPECTED_NAME
};

Expectation parse_entry(const std::string& path, const YAML::Node& node) {
  const int line = line_of(node, 1);
  if (!node.IsMap()) throw YamlError({path, line}, "expected a mapping {match, status, reason}");
  Expectation e;
  e.file = path;
  e.line = line;
  std::set<std::string> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const YAML::Node key_node = it->first, value_node = it->second;
    const int key_line = line_of(key_node, line);
    const std::string key = key_node.IsScalar() ? key_node.Scalar() : "";
    if (!seen.insert(key).second) throw YamlError({path, key_line}, "duplicate key '" + key + "'");
    if (!value_node.IsScalar() || value_node.Scalar().empty())
      throw YamlError({path, key_line}, "key '" + key + "': expected a non-empty string");
    const std::string value = value_node.Scalar();
    if (key == "match") {
      e.match = value;
    } else if (key == "reason") {
      e.reason = value;
    } else if (key == "execution") {
      if (value != "real" && value != "simulated")
        throw YamlError({path, key_line}, "execution '" + value + "': expected real or simulated");
      e.execution = value;
    } else if (key == "class") {
      bool known = false;
      for (const char* name : kFailureClasses) known = known || value == name;
      if (!known) throw YamlError({path, key_line}, "class '" + value + "': expected one of " + failure_class_list());
      e.failure_class = value;
    } else if (key == "status") {
      const std::optional<ExpectedStatus> status = expected_status_named(value);
      if (!status) throw YamlError({path, key_line}, "status '" + value + "': expected " + expected_status_list());
      e.status = *status;
    } else {
      throw YamlError({path, key_line}, "unknown key '" + key + "'; expected match, status, reason, execution, class");
    }
  }
  for (const char* key : {"match", "status", "reason"})
    if (!seen.count(key)) throw YamlError({path, line}, std::string("missing key '") + key + "' (entries need match, status, reason)");
  return e;
}

}  // namespace

std::string failure_class_list() {
  std::string out;
  for (const char* name : kFailureClasses) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

const std::string& expected_status_list() {
  static const std::string list = [] {
    std::string out;
    for (const auto& row : kStatusNames) out += (out.empty() ? "" : " or ") + std::string(row.name);
    return out;
  }();
  return list;
}

std::optional<ExpectedStatus> expected_status_named(std::string_view name) noexcept {
  for (const auto& row : kStatusNames)
    if (name == row.name) return row.status;
  return std::nullopt;
}

const char* expected_status_name(ExpectedStatus s) noexcept {
  for (const auto& row : kStatusNames)
    if (row.status == s) return row.name;
  return "?";
}

ExpectationFile ExpectationFile::load(const std::string& path) {
  const YAML::Node doc = yaml::load_file(path);
  if (!doc.IsMap()) throw YamlError({path, 1}, "expected a mapping with the key 'expectations' at the top level");

  ExpectationFile file;
  file.path_ = path;
  bool have_list = false;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    // Copies, not references: yaml-cpp's iterator hands out a temporary proxy.
    const YAML::Node key_node = it->first, value = it->second;
    const std::string key = key_node.IsScalar() ? key_node.Scalar() : "";
    const int line = line_of(key_node, 1);
    if (key == "expectations") {
      if (!value.IsSequence()) throw YamlError({path, line}, "'expectations' must be a list (use [] for none)");
      for (const YAML::Node& entry : value) file.entries_.push_back(parse_entry(path, entry));
      have_list = true;
    } else if (key != "description") {
      throw YamlError({path, line}, "unknown top-level key '" + key + "'; expected description, expectations");
    }
  }
  if (!have_list) throw YamlError({path, 1}, "missing top-level key 'expectations'");
  return file;
}

ExpectationFile ExpectationFile::load_if_exists(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};
  return load(path);
}

const Expectation* ExpectationFile::find(std::string_view case_id, std::string_view execution) const noexcept {
  for (const auto& e : entries_)
    if (glob_match(e.match, case_id) && (e.execution.empty() || execution.empty() || e.execution == execution)) return &e;
  return nullptr;
}

std::vector<const Expectation*> ExpectationFile::stale(const std::vector<std::string>& case_ids) const {
  std::vector<const Expectation*> out;
  for (const auto& e : entries_) {
    bool used = false;
    for (const auto& id : case_ids) {
      if (glob_match(e.match, id)) {
        used = true;
        break;
      }
    }
    if (!used) out.push_back(&e);
  }
  return out;
}

bool glob_match(std::string_view pattern, std::string_view text) {
  return ::fnmatch(std::string(pattern).c_str(), std::string(text).c_str(), FNM_NOESCAPE) == 0;
}

}  // namespace crossdev::parity
