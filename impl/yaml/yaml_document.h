#pragma once
// Loading one YAML document as a yaml-cpp node tree, the way every crossdev data file is read:
// only a regular file of at most `max_bytes` (util/input_file.h), YAML syntax errors at their
// line, nesting capped, and a key repeated in any mapping rejected (yaml-cpp keeps both). Every
// problem is a YamlError "file:line: ...". The helpers below build the same messages for the
// checks a reader makes on the tree. Matrix files use the faster row reader of conformance/matrix/matrix_file.h.
#include <cstdint>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "util/input_file.h"
#include "yaml/yaml_error.h"

namespace crossdev::yaml {

// The document in `path`. `cap_hint` names how a user raises the size cap, if they can.
YAML::Node load_file(const std::string& path, std::uintmax_t max_bytes = kDefaultMaxInputBytes,
                     const char* cap_hint = nullptr);
// The document in `text`, reported as coming from `name`.
YAML::Node parse(const std::string& text, const std::string& name);

// 1-based line of `node`, or `default_line` when yaml-cpp has none.
int line_of(const YAML::Node& node, int default_line = 0);
SourceLocation location(const std::string& file, const YAML::Node& node, int default_line = 0);
[[noreturn]] void fail(const std::string& file, const YAML::Node& node, const std::string& message);

// `map` must be a mapping whose keys are all in `allowed` (else: "unknown key 'k'; expected one
// of a, b"). `what` names the mapping in the message ("an expectation entry").
void check_keys(const std::string& file, const YAML::Node& map, const std::vector<std::string>& allowed,
                const std::string& what = "a mapping");
// map[key] as a string; "" when absent and not required.
std::string scalar(const std::string& file, const YAML::Node& map, const char* key, bool required);

}  // namespace crossdev::yaml
