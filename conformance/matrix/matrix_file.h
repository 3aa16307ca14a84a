#pragma once
// Matrix files: table-driven conformance cases. One YAML file holds one suite:
//
//   suite: redirect                  # which Suite validates and runs the rows
//   defaults: {policy: torchdevice}  # optional; merged under every row
//   cases:
//     - {id: ..., source: ..., intent: ..., <suite keys>}
//
// Every row needs `id` (unique across everything loaded) and `source` (seed or upstream
// reference); `intent` says in one line what the case checks (LLVM lit style). Any problem
// is a YamlError whose message starts "file:line: " and says what was expected.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "yaml/yaml_error.h"

namespace crossdev::yaml {

class Row {
 public:
  // A field's value: scalars are kept as text (a YAML node per scalar costs ~0.5 KB, which
  // made a 280k-row matrix take 2.5 GB); lists and mappings as YAML nodes.
  enum class FieldKind : unsigned char { Scalar, Null, Node };
  struct Field {
    std::string key;
    int line = 0;  // 1-based line of the value
    FieldKind kind = FieldKind::Scalar;
    std::string scalar;                      // kind Scalar
    std::shared_ptr<const YAML::Node> node;  // kind Node
  };

  Row(std::string file, YAML::Node node, std::map<std::string, YAML::Node> fields);
  // `fields` must have unique keys. Throws YamlError like the typed accessors (id, source).
  Row(std::shared_ptr<const std::string> file, int line, std::vector<Field> fields);

  const std::string& id() const { return id_; }
  const std::string& source() const { return source_; }
  const std::string& intent() const { return intent_; }
  const std::string& file() const { return *file_; }
  SourceLocation where() const { return {*file_, line_}; }
  SourceLocation where(const std::string& key) const;  // the key's value, else the row

  bool has(const std::string& key) const { return find(key) != nullptr; }
  // Throws if absent. A scalar's node is made on first use (not thread-safe for that first use).
  const YAML::Node& node(const std::string& key) const;
  std::vector<std::string> keys() const;  // sorted

  // Typed accessors: each throws YamlError("file:line: key 'k': expected ...").
  std::string str(const std::string& key) const;
  std::string str_or(const std::string& key, const std::string& default_value) const;
  // A scalar or a list of scalars; a YAML null (~) becomes "" when allow_null.
  std::vector<std::string> str_list(const std::string& key, bool allow_null = false) const;
  double number(const std::string& key) const;
  double number_or(const std::string& key, double default_value) const;
  long long integer(const std::string& key) const;
  bool boolean(const std::string& key) const;
  bool boolean_or(const std::string& key, bool default_value) const;

  [[noreturn]] void fail(const std::string& key, const std::string& message) const;

 private:
  const Field* find(const std::string& key) const;
  const Field& field(const std::string& key) const;  // throws if absent
  void init();

  std::shared_ptr<const std::string> file_;
  int line_ = 0;
  std::string id_, source_, intent_;
  std::vector<Field> fields_;  // sorted by key
  mutable std::map<std::string, YAML::Node> scalar_nodes_;  // node() of scalar fields
};

struct MatrixFile {
  std::string path;
  std::string suite;
  std::vector<Row> rows;
};

// Keys a suite accepts. `id`, `source` and `intent` are common to every suite.
struct SuiteSchema {
  std::vector<std::string> required;
  std::vector<std::string> optional;
};

// Matrix files above this size are refused (crossdev run --max-matrix-bytes raises it).
inline constexpr std::uintmax_t kDefaultMaxMatrixBytes = std::uintmax_t{64} << 20;  // 64 MiB

// Parses one file: YAML syntax, top-level shape, unknown/missing keys, duplicate keys.
// Suite-specific value checks happen in Suite::validate (see conformance/runner/suite.h). Only
// a regular file of at most max_bytes is read: a FIFO, a device or a /proc file is a YamlError
// at once (no blocking open, no unbounded read).
MatrixFile load_matrix_file(const std::string& path, const SuiteSchema* (*schema_for)(const std::string& suite),
                            std::uintmax_t max_bytes = kDefaultMaxMatrixBytes);

}  // namespace crossdev::yaml
