#include "manager/error_classifier.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>


#include "manager/recovery.h"
#include "util/data_dir.h"
#include "yaml/yaml_document.h"

namespace crossdev::manager {
namespace {

using yaml::check_keys;
using yaml::fail;
using yaml::scalar;

RecoveryStage parse_stage(const std::string& file, const YAML::Node& node) {
  if (!node.IsScalar()) fail(file, node, "recovery stage: expected a string such as \"empty_cache+move_to_cpu\"");
  RecoveryStage stage;
  std::stringstream ss(node.as<std::string>());
  std::string action;
  while (std::getline(ss, action, '+')) {
    if (!find_recovery(action))
      fail(file, node, "unknown recovery action '" + action + "'; expected one of " + recovery_action_list());
    stage.push_back(action);
  }
  if (stage.empty()) fail(file, node, "empty recovery stage");
  return stage;
}

}  // namespace

const std::vector<std::string>& required_error_categories() {
  static const std::vector<std::string> names = {
      "device_mismatch",  "dtype_mismatch",  "out_of_memory",
      "mps_placeholder_storage", "float64_unsupported", "unsupported_op",
      "inference_tensor_version_counter", "cuda_sticky_error", "cuda_runtime", "model_loading"};
  return names;
}

const ErrorClassifier& ErrorClassifier::builtin() {
  static const ErrorClassifier table = [] {
    const char* env = std::getenv("CROSSDEV_ERROR_PATTERNS");
    return from_file(env && *env ? env : data_file("data/error_patterns.yaml"));
  }();
  return table;
}

ErrorClassifier ErrorClassifier::from_file(const std::string& path) {
  return from_document(yaml::load_file(path), path);
}

ErrorClassifier ErrorClassifier::from_yaml(const std::string& text, const std::string& name) {
  return from_document(yaml::parse(text, name), name);
}

ErrorClassifier ErrorClassifier::from_document(const YAML::Node& root, const std::string& name) {
  ErrorClassifier c;
  c.path_ = name;
  check_keys(name, root, {"categories", "patterns"}, "the top level: a mapping");
  const YAML::Node cats = root["categories"];
  if (!cats || !cats.IsSequence()) throw YamlError({name, 1}, "'categories' must be a list");
  for (const auto& node : cats) {
    check_keys(name, node, {"name", "description", "recovery", "source"}, "a category");
    ErrorCategoryInfo info;
    info.name = scalar(name, node, "name", true);
    info.description = scalar(name, node, "description", false);
    info.source = scalar(name, node, "source", true);
    info.line = yaml::line_of(node, 1);
    const auto& known = required_error_categories();
    if (std::find(known.begin(), known.end(), info.name) == known.end())
      fail(name, node, "unknown category '" + info.name + "'");
    if (c.category(info.name)) fail(name, node, "category '" + info.name + "' defined twice");
    const YAML::Node rec = node["recovery"];
    if (!rec || !rec.IsSequence() || rec.size() == 0) fail(name, node, "'recovery' must be a non-empty list of stages");
    for (const auto& stage : rec) info.recovery.push_back(parse_stage(name, stage));
    // An action that ends recovery never lets a retry happen, so any stage beside it could not run.
    for (const auto& stage : info.recovery)
      for (const auto& action : stage)
        if (find_recovery(action)->ends_recovery && (info.recovery.size() > 1 || stage.size() > 1))
          fail(name, node, "recovery action '" + action + "' ends recovery: it must be the category's only stage, alone");
    c.categories_.push_back(std::move(info));
  }
  for (const auto& required : required_error_categories())
    if (!c.category(required)) throw YamlError({name, 1}, "category '" + required + "' is not defined");

  const YAML::Node pats = root["patterns"];
  if (!pats || !pats.IsSequence()) throw YamlError({name, 1}, "'patterns' must be a list");
  for (const auto& node : pats) {
    check_keys(name, node, {"category", "contains", "regex", "exception", "source"}, "a pattern");
    ErrorPattern p;
    p.category = scalar(name, node, "category", true);
    p.contains = scalar(name, node, "contains", false);
    p.regex_text = scalar(name, node, "regex", false);
    p.exception = scalar(name, node, "exception", false);
    p.source = scalar(name, node, "source", true);
    p.where = yaml::location(name, node, 1).str();
    if (!c.category(p.category)) fail(name, node, "pattern for undefined category '" + p.category + "'");
    if (p.contains.empty() && p.regex_text.empty() && p.exception.empty())
      fail(name, node, "a pattern needs 'contains', 'regex' or 'exception'");
    if (!p.exception.empty() && !is_known_error_type(p.exception))
      fail(name, node, "unknown exception '" + p.exception + "'; expected one of " + error_type_list());
    if (!p.regex_text.empty()) {
      try {
        p.regex = std::regex(p.regex_text, std::regex::ECMAScript | std::regex::optimize);
      } catch (const std::regex_error& e) {
        fail(name, node, "invalid regex '" + p.regex_text + "': " + e.what());
      }
    }
    c.patterns_.push_back(std::move(p));
  }
  for (const auto& cat : c.categories_) {
    bool used = false;
    for (const auto& p : c.patterns_) used |= p.category == cat.name;
    if (!used) throw YamlError({name, cat.line}, "category '" + cat.name + "' has no pattern");
  }
  return c;
}

std::optional<Classification> ErrorClassifier::classify(const ErrorInfo& error) const {
  for (const auto& p : patterns_) {
    if (!p.exception.empty() && p.exception != error.type) continue;
    if (!p.contains.empty() && error.message.find(p.contains) == std::string::npos) continue;
    if (!p.regex_text.empty() && !std::regex_search(error.message, p.regex)) continue;
    return Classification{category(p.category), &p};
  }
  return std::nullopt;
}

const ErrorCategoryInfo* ErrorClassifier::category(const std::string& name) const {
  for (const auto& c : categories_)
    if (c.name == name) return &c;
  return nullptr;
}

}  // namespace crossdev::manager
