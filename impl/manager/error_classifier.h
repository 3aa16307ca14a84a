#pragma once
// Table-driven error classification (seed 003's device error handler). The table is data:
// matrices/data/error_patterns.yaml lists, in match order, patterns that map PyTorch's
// verbatim error texts (and exception types) to a category, and for each category its
// recovery stages. Any problem in that file is a YamlError naming file:line
// (impl/yaml).
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "manager/error_info.h"
#include "yaml/yaml_error.h"

namespace YAML {
class Node;
}

namespace crossdev::manager {

// One recovery stage per failed attempt of a category; a stage may combine actions
// ("empty_cache+move_to_next_device"). Names come from recovery.h's table.
using RecoveryStage = std::vector<std::string>;

struct ErrorCategoryInfo {
  std::string name;
  std::string description;
  std::vector<RecoveryStage> recovery;
  std::string source;
  int line = 0;
};

struct ErrorPattern {
  std::string category;
  std::string contains;          // substring of the message ("" = not used)
  std::string regex_text;        // ECMAScript regex searched in the message ("" = not used)
  std::regex regex;
  std::string exception;         // required exception type ("" = any)
  std::string source;            // where the text comes from (PyTorch file / issue)
  std::string where;             // file:line of the pattern
};

struct Classification {
  const ErrorCategoryInfo* category;
  const ErrorPattern* pattern;
};

class ErrorClassifier {
 public:
  // The table at CROSSDEV_ERROR_PATTERNS (env) or the built-in catalog's data/error_patterns.yaml (util/data_dir.h).
  static const ErrorClassifier& builtin();
  // Both throw YamlError.
  static ErrorClassifier from_file(const std::string& path);
  static ErrorClassifier from_yaml(const std::string& text, const std::string& name);

  // First matching pattern wins; nullopt means "unclassified" (device_safe rethrows it unchanged).
  std::optional<Classification> classify(const ErrorInfo& error) const;
  const ErrorCategoryInfo* category(const std::string& name) const;
  const std::vector<ErrorCategoryInfo>& categories() const noexcept { return categories_; }
  const std::vector<ErrorPattern>& patterns() const noexcept { return patterns_; }
  const std::string& path() const noexcept { return path_; }

 private:
  static ErrorClassifier from_document(const YAML::Node& root, const std::string& name);

  std::string path_;
  std::vector<ErrorCategoryInfo> categories_;
  std::vector<ErrorPattern> patterns_;
};

// The categories the issue defines (a pattern file must define exactly these).
const std::vector<std::string>& required_error_categories();

}  // namespace crossdev::manager
