#include "yaml/yaml_document.h"

#include <set>

#include <c10/util/StringUtil.h>

namespace crossdev::yaml {
namespace {

constexpr int kMaxDepth = 256;  // the matrix reader's cap too

// Duplicate keys (yaml-cpp keeps every pair) and nesting deeper than kMaxDepth.
void check_tree(const std::string& file, const YAML::Node& node, int depth) {
  if (depth > kMaxDepth) fail(file, node, "nested deeper than " + std::to_string(kMaxDepth) + " levels");
  if (node.IsMap()) {
    std::set<std::string> seen;
    for (const auto& kv : node) {
      if (kv.first.IsScalar() && !seen.insert(kv.first.Scalar()).second)
        fail(file, kv.first, "duplicate key '" + kv.first.Scalar() + "'");
      check_tree(file, kv.second, depth + 1);
    }
  } else if (node.IsSequence()) {
    for (const auto& item : node) check_tree(file, item, depth + 1);
  }
}

}  // namespace

int line_of(const YAML::Node& node, int default_line) {
  const YAML::Mark mark = node.Mark();
  return mark.is_null() || mark.line < 0 ? default_line : mark.line + 1;
}

SourceLocation location(const std::string& file, const YAML::Node& node, int default_line) {
  return {file, line_of(node, default_line)};
}

void fail(const std::string& file, const YAML::Node& node, const std::string& message) {
  throw YamlError(location(file, node, 1), message);
}

YAML::Node parse(const std::string& text, const std::string& name) {
  YAML::Node doc;
  try {
    doc = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw YamlError({name, e.mark.is_null() ? 0 : e.mark.line + 1}, "YAML syntax error: " + e.msg);
  }
  check_tree(name, doc, 0);
  return doc;
}

YAML::Node load_file(const std::string& path, std::uintmax_t max_bytes, const char* cap_hint) {
  std::string text;
  try {
    text = read_input_file(path, max_bytes, cap_hint);
  } catch (const InputFileError& e) {
    throw YamlError({path, 0}, std::string("cannot read: ") + e.what());
  }
  return parse(text, path);
}

void check_keys(const std::string& file, const YAML::Node& map, const std::vector<std::string>& allowed,
                const std::string& what) {
  if (!map.IsMap()) fail(file, map, "expected " + what + " with keys " + c10::Join(", ", allowed));
  for (const auto& kv : map) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string("<non-scalar>");
    bool known = false;
    for (const auto& a : allowed) known = known || a == key;
    if (!known) fail(file, kv.first, "unknown key '" + key + "'; expected one of " + c10::Join(", ", allowed));
  }
}

std::string scalar(const std::string& file, const YAML::Node& map, const char* key, bool required) {
  const YAML::Node value = map[key];
  if (!value) {
    if (required) fail(file, map, std::string("missing key '") + key + "'");
    return "";
  }
  if (!value.IsScalar()) fail(file, value, std::string("key '") + key + "': expected a string");
  return value.Scalar();
}

}  // namespace crossdev::yaml
