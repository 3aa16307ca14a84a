#include "matrix/matrix.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

namespace crossdev::conformance {
namespace {

int line_of(const YAML::Node& node, int fallback) {
  const YAML::Mark mark = node.Mark();
  return mark.is_null() || mark.line < 0 ? fallback : mark.line + 1;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// Map entries in document order, rejecting duplicate keys (yaml-cpp keeps both silently).
std::vector<std::pair<std::string, YAML::Node>> entries(const std::string& file, const YAML::Node& map, int fallback_line) {
  std::vector<std::pair<std::string, YAML::Node>> out;
  std::set<std::string> seen;
  for (auto it = map.begin(); it != map.end(); ++it) {
    const int line = line_of(it->first, fallback_line);
    if (!it->first.IsScalar()) throw MatrixError({file, line}, "expected a plain key, got a " + std::string(it->first.IsMap() ? "mapping" : "sequence"));
    const std::string key = it->first.Scalar();
    if (!seen.insert(key).second) throw MatrixError({file, line}, "duplicate key '" + key + "'");
    out.emplace_back(key, it->second);
  }
  return out;
}

}  // namespace

Row::Row(std::string file, YAML::Node node, std::map<std::string, YAML::Node> fields)
    : file_(std::move(file)), line_(line_of(node, 0)), fields_(std::move(fields)) {
  id_ = str("id");
  source_ = str("source");
  intent_ = str_or("intent", "");
  if (id_.empty()) fail("id", "expected a non-empty id");
}

SourceLocation Row::where(const std::string& key) const {
  auto it = fields_.find(key);
  return {file_, it == fields_.end() ? line_ : line_of(it->second, line_)};
}

void Row::fail(const std::string& key, const std::string& message) const {
  std::string prefix = id_.empty() ? std::string() : "row '" + id_ + "': ";
  if (!key.empty()) prefix += "key '" + key + "': ";
  throw MatrixError(where(key), prefix + message);
}

const YAML::Node& Row::node(const std::string& key) const {
  auto it = fields_.find(key);
  if (it == fields_.end()) fail(key, "missing");
  return it->second;
}

std::vector<std::string> Row::keys() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : fields_) out.push_back(k);
  return out;
}

std::string Row::str(const std::string& key) const {
  const YAML::Node& n = node(key);
  if (!n.IsScalar()) fail(key, "expected a string");
  return n.Scalar();
}

std::string Row::str_or(const std::string& key, const std::string& fallback) const {
  return has(key) ? str(key) : fallback;
}

std::vector<std::string> Row::str_list(const std::string& key, bool allow_null) const {
  const YAML::Node& n = node(key);
  std::vector<std::string> out;
  auto take = [&](const YAML::Node& item) {
    if (item.IsNull() && allow_null) {
      out.emplace_back();
    } else if (item.IsScalar()) {
      out.push_back(item.Scalar());
    } else {
      fail(key, allow_null ? "expected a string, ~ (none), or a list of them" : "expected a string or a list of strings");
    }
  };
  if (n.IsSequence()) {
    if (n.size() == 0) fail(key, "expected a non-empty list");
    for (const auto& item : n) take(item);
  } else {
    take(n);
  }
  return out;
}

double Row::number(const std::string& key) const {
  const YAML::Node& n = node(key);
  double v = 0;
  if (!n.IsScalar() || !YAML::convert<double>::decode(n, v)) fail(key, "expected a number, got '" + (n.IsScalar() ? n.Scalar() : std::string("non-scalar")) + "'");
  return v;
}

double Row::number_or(const std::string& key, double fallback) const { return has(key) ? number(key) : fallback; }

long long Row::integer(const std::string& key) const {
  const YAML::Node& n = node(key);
  long long v = 0;
  if (!n.IsScalar() || !YAML::convert<long long>::decode(n, v)) fail(key, "expected an integer");
  return v;
}

bool Row::boolean(const std::string& key) const {
  const YAML::Node& n = node(key);
  bool v = false;
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v)) fail(key, "expected true or false, got '" + (n.IsScalar() ? n.Scalar() : std::string("non-scalar")) + "'");
  return v;
}

bool Row::boolean_or(const std::string& key, bool fallback) const { return has(key) ? boolean(key) : fallback; }

MatrixFile load_matrix_file(const std::string& path, const SuiteSchema* (*schema_for)(const std::string& suite)) {
  std::ifstream in(path);
  if (!in) throw MatrixError({path, 0}, "cannot open matrix file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  YAML::Node doc;
  try {
    doc = YAML::Load(buffer.str());
  } catch (const YAML::Exception& e) {
    throw MatrixError({path, e.mark.is_null() ? 0 : e.mark.line + 1}, "YAML syntax error: " + e.msg);
  }
  if (!doc.IsMap()) throw MatrixError({path, 1}, "expected a mapping with keys 'suite' and 'cases' at the top level");

  MatrixFile file;
  file.path = path;
  YAML::Node cases, defaults;
  int suite_line = 1;
  for (const auto& [key, value] : entries(path, doc, 1)) {
    const int line = line_of(value, 1);
    if (key == "suite") {
      if (!value.IsScalar()) throw MatrixError({path, line}, "'suite' must be a string");
      file.suite = value.Scalar();
      suite_line = line;
    } else if (key == "cases") {
      if (!value.IsSequence()) throw MatrixError({path, line}, "'cases' must be a list of rows");
      cases = value;
    } else if (key == "defaults") {
      if (!value.IsMap()) throw MatrixError({path, line}, "'defaults' must be a mapping of row keys");
      defaults = value;
    } else if (key != "description") {
      throw MatrixError({path, line}, "unknown top-level key '" + key + "'; expected suite, description, defaults, cases");
    }
  }
  if (file.suite.empty()) throw MatrixError({path, 1}, "missing top-level key 'suite'");
  const SuiteSchema* schema = schema_for(file.suite);
  if (!schema) throw MatrixError({path, suite_line}, "unknown suite '" + file.suite + "'");
  if (!cases) throw MatrixError({path, 1}, "missing top-level key 'cases'");

  std::vector<std::string> allowed = {"id", "source", "intent"};
  allowed.insert(allowed.end(), schema->required.begin(), schema->required.end());
  allowed.insert(allowed.end(), schema->optional.begin(), schema->optional.end());
  std::vector<std::string> required = {"id", "source"};
  required.insert(required.end(), schema->required.begin(), schema->required.end());

  auto check_key = [&](const std::string& key, int line, const char* where) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      throw MatrixError({path, line}, std::string("unknown key '") + key + "'" + where + " for suite '" + file.suite +
                                          "'; expected one of " + join(allowed));
    }
  };
  std::map<std::string, YAML::Node> default_fields;
  if (defaults) {
    for (const auto& [key, value] : entries(path, defaults, 1)) {
      check_key(key, line_of(value, 1), " in defaults");
      default_fields[key] = value;
    }
  }

  for (const auto& row_node : cases) {
    const int row_line = line_of(row_node, 1);
    if (!row_node.IsMap()) throw MatrixError({path, row_line}, "expected a row mapping with id, source and suite keys");
    std::map<std::string, YAML::Node> fields = default_fields;
    for (const auto& [key, value] : entries(path, row_node, row_line)) {
      check_key(key, line_of(value, row_line), "");
      // erase + emplace, never `fields[key] = value`: YAML::Node assignment writes through to the
      // node it aliases, which would rewrite the shared default for every later row.
      fields.erase(key);
      fields.emplace(key, value);
    }
    for (const auto& key : required) {
      if (!fields.count(key)) {
        const std::string id = fields.count("id") && fields["id"].IsScalar() ? "row '" + fields["id"].Scalar() + "': " : "";
        throw MatrixError({path, row_line}, id + "missing required key '" + key + "' (suite '" + file.suite +
                                                "' rows need: " + join(required) + ")");
      }
    }
    file.rows.emplace_back(path, row_node, std::move(fields));
  }
  return file;
}

}  // namespace crossdev::conformance
