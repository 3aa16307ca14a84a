#include "runner/python_suite_table.h"

#include <algorithm>
#include <stdexcept>

#include <yaml-cpp/yaml.h>

#include "parity/expectations.h"
#include "util/named_table.h"

namespace crossdev::conformance {
namespace {

#include "runner/python_suites.inc"  // kPythonSuitesJson

struct RowKeyTypeName {
  const char* name;
  RowKeyType type;
};
constexpr RowKeyTypeName kRowKeyTypes[] = {
    {"globs", RowKeyType::Globs},     {"device_kinds", RowKeyType::DeviceKinds}, {"names", RowKeyType::Names},
    {"list", RowKeyType::List},       {"string", RowKeyType::String},            {"factory", RowKeyType::Factory},
    {"choice", RowKeyType::Choice},   {"count", RowKeyType::Count},              {"seconds", RowKeyType::Seconds},
    {"boolean", RowKeyType::Boolean}, {"tolerance", RowKeyType::Tolerance},
};

[[noreturn]] void bad(const std::string& where, const std::string& what) {
  throw std::logic_error("python/crossdev/python_suites.json: " + where + ": " + what);
}

std::string text(const YAML::Node& node, const char* field, const std::string& where, bool required = true) {
  const YAML::Node value = node[field];
  if (!value) {
    if (required) bad(where, std::string("missing '") + field + "'");
    return "";
  }
  if (!value.IsScalar()) bad(where, std::string("'") + field + "' is not a string");
  return value.Scalar();
}

bool flag(const YAML::Node& node, const char* field, const std::string& where) {
  const YAML::Node value = node[field];
  if (!value) return false;
  bool out = false;
  if (!YAML::convert<bool>::decode(value, out)) bad(where, std::string("'") + field + "' is not true or false");
  return out;
}

std::vector<std::string> texts(const YAML::Node& node, const char* field, const std::string& where) {
  std::vector<std::string> out;
  const YAML::Node value = node[field];
  if (!value) return out;
  if (!value.IsSequence()) bad(where, std::string("'") + field + "' is not a list");
  for (const auto& v : value) out.push_back(v.Scalar());
  return out;
}

RowKeySpec parse_key(const YAML::Node& node, const std::string& where) {
  RowKeySpec k;
  k.key = text(node, "key", where);
  const std::string at = where + " key '" + k.key + "'";
  const std::string type = text(node, "type", at);
  const auto* row = named::find(kRowKeyTypes, type);
  if (!row) bad(at, "unknown type '" + type + "'; expected one of " + named::names(kRowKeyTypes));
  k.type = row->type;
  k.required = flag(node, "required", at);
  k.to_worker = flag(node, "to_worker", at);
  k.expected = text(node, "expected", at, false);
  k.choices = texts(node, "choices", at);
  if ((k.type == RowKeyType::Choice) && k.choices.empty()) bad(at, "a choice without choices");
  if (const YAML::Node d = node["default"]; d && (k.type == RowKeyType::Count || k.type == RowKeyType::Seconds)) {
    if (!YAML::convert<double>::decode(d, k.default_number)) bad(at, "the default is not a number");
    k.has_default = true;
  }
  return k;
}

}  // namespace

const RowKeySpec* PythonSuiteSpec::find_key(const std::string& key) const {
  for (const auto& k : keys)
    if (k.key == key) return &k;
  return nullptr;
}

bool PythonSuiteSpec::allows_expectation(const std::string& status) const {
  return std::find(expectation_statuses.begin(), expectation_statuses.end(), status) != expectation_statuses.end();
}

const char* row_key_type_name(RowKeyType type) {
  for (const auto& row : kRowKeyTypes)
    if (row.type == type) return row.name;
  return "?";
}

std::vector<PythonSuiteSpec> parse_python_suite_specs(const std::string& json) {
  YAML::Node root;
  try {
    root = YAML::Load(json);
  } catch (const YAML::Exception& e) {
    bad("line " + std::to_string(e.mark.line + 1), e.msg);
  }
  if (!root["suites"] || !root["suites"].IsSequence()) bad("top", "expected a 'suites' list");
  std::vector<PythonSuiteSpec> out;
  for (std::size_t i = 0; i < root["suites"].size(); ++i) {
    const YAML::Node node = root["suites"][i];
    const std::string where = "suites[" + std::to_string(i) + "]";
    PythonSuiteSpec s;
    s.name = text(node, "name", where);
    const std::string at = where + " (" + s.name + ")";
    s.summary = text(node, "summary", at);
    s.run_module = text(node, "run_module", at);
    s.check_module = text(node, "check_module", at, false);
    s.bad_row_key = text(node, "bad_row_key", at);
    const std::string planned_by = text(node, "planned_by", at);
    if (planned_by != "worker" && planned_by != "device_kinds") bad(at, "planned_by is worker or device_kinds, not '" + planned_by + "'");
    s.planned_by_worker = planned_by == "worker";
    const auto segments = texts(node, "case_id", at);
    const auto kind = std::find(segments.begin(), segments.end(), "kind");
    if (segments.empty() || segments.front() != "row" || kind == segments.end()) bad(at, "case_id starts with row and names kind");
    s.kind_segment = static_cast<std::size_t>(kind - segments.begin());
    s.expectation_statuses = texts(node, "expectations", at);
    for (const auto& st : s.expectation_statuses)
      if (!parity::expected_status_named(st)) bad(at, "an expectation is " + parity::expected_status_list() + ", not '" + st + "'");
    s.shards_its_cases = flag(node, "shards_its_cases", at);
    s.records_crashes = flag(node, "records_crashes", at);
    if (!node["keys"] || !node["keys"].IsSequence()) bad(at, "expected a 'keys' list");
    for (const auto& key : node["keys"]) s.keys.push_back(parse_key(key, at));
    if (!s.find_key("devices") || s.find_key("devices")->type != RowKeyType::DeviceKinds)
      bad(at, "every Python suite's rows name their device kinds: a 'devices' key of type device_kinds");
    if (!s.find_key(s.bad_row_key)) bad(at, "bad_row_key '" + s.bad_row_key + "' is not one of its keys");
    out.push_back(std::move(s));
  }
  return out;
}

const std::vector<PythonSuiteSpec>& python_suite_specs() {
  static const std::vector<PythonSuiteSpec> specs = parse_python_suite_specs(kPythonSuitesJson);
  return specs;
}

}  // namespace crossdev::conformance
