#pragma once
// The one error type of every YAML file crossdev reads (matrices, expectations, error patterns,
// bench cases): what() is "file:line: what was wrong; what was expected", and where() keeps the
// location for callers that report it separately (the CLI's exit 2, the pytest plugin).
#include <stdexcept>
#include <string>

namespace crossdev {

struct SourceLocation {
  std::string file;
  int line = 0;  // 1-based; 0 when the file could not be read at all
  std::string str() const { return file + ":" + std::to_string(line); }
};

class YamlError : public std::runtime_error {
 public:
  YamlError(SourceLocation where, const std::string& message)
      : std::runtime_error(where.str() + ": " + message), where_(std::move(where)) {}
  const SourceLocation& where() const noexcept { return where_; }

 private:
  SourceLocation where_;
};

}  // namespace crossdev
