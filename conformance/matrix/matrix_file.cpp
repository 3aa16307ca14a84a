#include "matrix/matrix_file.h"

#include <algorithm>
#include <set>
#include <sstream>

#include <c10/util/StringUtil.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>
#ifdef CROSSDEV_HAVE_LIBYAML
#include <yaml.h>
#endif

#include "util/input_file.h"
#include "yaml/yaml_document.h"

namespace crossdev::yaml {

Row::Row(std::string file, YAML::Node node, std::map<std::string, YAML::Node> fields)
    : file_(std::make_shared<const std::string>(std::move(file))), line_(line_of(node, 0)) {
  for (auto& [key, value] : fields) {
    Field f;
    f.key = key;
    f.line = line_of(value, line_);
    if (value.IsScalar()) {
      f.scalar = value.Scalar();
    } else if (value.IsNull()) {
      f.kind = FieldKind::Null;
    } else {
      f.kind = FieldKind::Node;
      f.node = std::make_shared<const YAML::Node>(value);
    }
    fields_.push_back(std::move(f));
  }
  init();
}

Row::Row(std::shared_ptr<const std::string> file, int line, std::vector<Field> fields)
    : file_(std::move(file)), line_(line), fields_(std::move(fields)) {
  std::sort(fields_.begin(), fields_.end(), [](const Field& a, const Field& b) { return a.key < b.key; });
  init();
}

void Row::init() {
  id_ = str("id");
  source_ = str("source");
  intent_ = str_or("intent", "");
  if (id_.empty()) fail("id", "expected a non-empty id");
}

const Row::Field* Row::find(const std::string& key) const {
  auto it = std::lower_bound(fields_.begin(), fields_.end(), key, [](const Field& f, const std::string& k) { return f.key < k; });
  return it != fields_.end() && it->key == key ? &*it : nullptr;
}

const Row::Field& Row::field(const std::string& key) const {
  const Field* f = find(key);
  if (!f) fail(key, "missing");
  return *f;
}

SourceLocation Row::where(const std::string& key) const {
  const Field* f = find(key);
  return {*file_, f ? f->line : line_};
}

void Row::fail(const std::string& key, const std::string& message) const {
  std::string prefix = id_.empty() ? std::string() : "row '" + id_ + "': ";
  if (!key.empty()) prefix += "key '" + key + "': ";
  throw YamlError(where(key), prefix + message);
}

const YAML::Node& Row::node(const std::string& key) const {
  const Field& f = field(key);
  if (f.kind == FieldKind::Node) return *f.node;
  auto it = scalar_nodes_.find(key);
  if (it == scalar_nodes_.end())
    it = scalar_nodes_.emplace(key, f.kind == FieldKind::Null ? YAML::Node(YAML::NodeType::Null) : YAML::Node(f.scalar)).first;
  return it->second;
}

std::vector<std::string> Row::keys() const {
  std::vector<std::string> out;
  for (const auto& f : fields_) out.push_back(f.key);
  return out;
}

std::string Row::str(const std::string& key) const {
  const Field& f = field(key);
  if (f.kind != FieldKind::Scalar) fail(key, "expected a string");
  return f.scalar;
}

std::string Row::str_or(const std::string& key, const std::string& default_value) const {
  return has(key) ? str(key) : default_value;
}

std::vector<std::string> Row::str_list(const std::string& key, bool allow_null) const {
  const Field& f = field(key);
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
  if (f.kind == FieldKind::Scalar) {
    out.push_back(f.scalar);
  } else if (f.kind == FieldKind::Null) {
    if (!allow_null) fail(key, "expected a string or a list of strings");
    out.emplace_back();
  } else if (f.node->IsSequence()) {
    if (f.node->size() == 0) fail(key, "expected a non-empty list");
    for (const auto& item : *f.node) take(item);
  } else {
    take(*f.node);
  }
  return out;
}

namespace {

// yaml-cpp's own conversions, on a scalar's text.
template <class T>
bool decode_scalar(const Row::Field& f, T& out) {
  if (f.kind != Row::FieldKind::Scalar) return false;
  return YAML::convert<T>::decode(YAML::Node(f.scalar), out);
}

std::string shown(const Row::Field& f) { return f.kind == Row::FieldKind::Scalar ? f.scalar : std::string("non-scalar"); }

}  // namespace

double Row::number(const std::string& key) const {
  const Field& f = field(key);
  double v = 0;
  if (!decode_scalar(f, v)) fail(key, "expected a number, got '" + shown(f) + "'");
  return v;
}

double Row::number_or(const std::string& key, double default_value) const { return has(key) ? number(key) : default_value; }

long long Row::integer(const std::string& key) const {
  long long v = 0;
  if (!decode_scalar(field(key), v)) fail(key, "expected an integer");
  return v;
}

bool Row::boolean(const std::string& key) const {
  const Field& f = field(key);
  bool v = false;
  if (!decode_scalar(f, v)) fail(key, "expected true or false, got '" + shown(f) + "'");
  return v;
}

bool Row::boolean_or(const std::string& key, bool default_value) const { return has(key) ? boolean(key) : default_value; }

namespace {

// ---- Reading: yaml-cpp's event parser into a compact form, without a node per scalar. ----
// The checks below run on that form in the order the node-tree reader used, so every error
// (and its file:line) is the same.

struct KeyProblem {
  int line = 0;
  std::string message;  // "" when none
};

struct RawMap {
  int line = 0;
  std::vector<Row::Field> fields;  // document order
  KeyProblem problem;              // the first non-plain or duplicate key
};

struct RawValue {
  enum Kind { Scalar, Null, Map, Seq } kind = Null;
  int line = 1;
  std::string scalar;
  std::shared_ptr<const YAML::Node> node;  // a built container (nested values)
  RawMap map;                              // a collected mapping (defaults, rows)
  std::vector<RawValue> items;             // a collected sequence (cases)
  bool collected = false;                  // map/items hold it (else node)
};

struct RawTop {
  bool is_map = false;
  std::vector<std::pair<std::string, RawValue>> entries;
  KeyProblem problem;
};

void note_key(KeyProblem& problem, const std::vector<std::string>& seen, const RawValue& key, bool* ok) {
  *ok = key.kind == RawValue::Scalar;
  if (!problem.message.empty()) return;
  if (!*ok) {
    problem = {key.line, std::string("expected a plain key, got a ") + (key.kind == RawValue::Map ? "mapping" : "sequence")};
  } else if (std::find(seen.begin(), seen.end(), key.scalar) != seen.end()) {
    problem = {key.line, "duplicate key '" + key.scalar + "'"};
  }
}

YAML::Node to_node(RawValue&& v) {
  switch (v.kind) {
    case RawValue::Scalar: return YAML::Node(v.scalar);
    case RawValue::Null: return YAML::Node(YAML::NodeType::Null);
    default: return v.node ? YAML::Node(*v.node) : YAML::Node(YAML::NodeType::Null);
  }
}

Row::Field to_field(std::string key, RawValue&& v) {
  Row::Field f;
  f.key = std::move(key);
  f.line = v.line;
  if (v.kind == RawValue::Scalar) {
    f.scalar = std::move(v.scalar);
  } else if (v.kind == RawValue::Null) {
    f.kind = Row::FieldKind::Null;
  } else {
    f.kind = Row::FieldKind::Node;
    f.node = v.node ? v.node : std::make_shared<const YAML::Node>(YAML::NodeType::Null);
  }
  return f;
}

class Collector : public YAML::EventHandler {
 public:
  RawTop top;
  bool uses_anchors = false;

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    note_anchor(anchor);
    RawValue v;
    v.line = mark.line + 1;
    deliver(std::move(v));
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    uses_anchors = true;
    RawValue v;
    v.line = mark.line + 1;
    deliver(std::move(v));
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, const std::string& value) override {
    note_anchor(anchor);
    RawValue v;
    v.kind = RawValue::Scalar;
    v.line = mark.line + 1;
    v.scalar = value;
    deliver(std::move(v));
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, YAML::EmitterStyle::value) override {
    note_anchor(anchor);
    open(false, mark.line + 1);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, YAML::EmitterStyle::value) override {
    note_anchor(anchor);
    open(true, mark.line + 1);
  }
  void OnMapEnd() override { close(); }

 private:
  static constexpr std::size_t kMaxDepth = 256;
  enum class Type { Top, TopSeq, CollectMap, Build };
  struct Frame {
    Type type = Type::Build;
    bool is_map = false;
    int line = 0;
    bool expect_key = true;
    std::string key;
    std::vector<std::string> seen;  // keys so far (CollectMap, Top)
    RawValue value;                      // TopSeq items / CollectMap map
    YAML::Node node;                     // Build
    YAML::Node pending_key;              // Build map
  };

  void note_anchor(YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor) uses_anchors = true;
  }

  bool in_key_position() const {
    const Frame& f = stack_.back();
    return f.is_map && f.expect_key;
  }

  void open(bool is_map, int line) {
    if (stack_.size() >= kMaxDepth) {
      YAML::Mark mark;
      mark.line = line - 1;
      throw YAML::ParserException(mark, "nested deeper than " + std::to_string(kMaxDepth) + " levels");
    }
    Frame f;
    f.type = Type::Build;
    f.is_map = is_map;
    f.line = line;
    if (stack_.empty()) {
      if (is_map) {
        f.type = Type::Top;
        top.is_map = true;
      }
    } else if (!in_key_position()) {
      const Type parent = stack_.back().type;
      if (parent == Type::Top) f.type = is_map ? Type::CollectMap : Type::TopSeq;
      if (parent == Type::TopSeq && is_map) f.type = Type::CollectMap;
    }
    if (f.type == Type::Build) f.node = YAML::Node(is_map ? YAML::NodeType::Map : YAML::NodeType::Sequence);
    f.value.line = line;
    f.value.map.line = line;
    stack_.push_back(std::move(f));
  }

  void close() {
    Frame f = std::move(stack_.back());
    stack_.pop_back();
    if (f.type == Type::Top) return;
    RawValue v = std::move(f.value);
    v.kind = f.is_map ? RawValue::Map : RawValue::Seq;
    v.line = f.line;
    if (f.type == Type::Build) {
      v.node = std::make_shared<const YAML::Node>(std::move(f.node));
    } else {
      v.collected = true;
    }
    deliver(std::move(v));
  }

  void deliver(RawValue&& v) {
    if (stack_.empty()) return;  // a scalar document: top.is_map stays false
    Frame& f = stack_.back();
    switch (f.type) {
      case Type::Top:
        if (f.expect_key) {
          bool ok = false;
          note_key(top.problem, f.seen, v, &ok);
          f.key = ok ? v.scalar : std::string();
          f.expect_key = false;
        } else {
          top.entries.emplace_back(std::move(f.key), std::move(v));
          f.seen.push_back(top.entries.back().first);
          f.expect_key = true;
        }
        break;
      case Type::CollectMap:
        if (f.expect_key) {
          bool ok = false;
          note_key(f.value.map.problem, f.seen, v, &ok);
          f.key = ok ? v.scalar : std::string();
          f.expect_key = false;
        } else {
          f.value.map.fields.push_back(to_field(std::move(f.key), std::move(v)));
          f.seen.push_back(f.value.map.fields.back().key);
          f.expect_key = true;
        }
        break;
      case Type::TopSeq:
        f.value.items.push_back(std::move(v));
        break;
      case Type::Build:
        if (!f.is_map) {
          f.node.push_back(to_node(std::move(v)));
        } else if (f.expect_key) {
          // reset, not `=`: assigning to a YAML::Node writes through to the node it refers to, which
          // is the previous key already inserted (a nested map's keys all became its last key).
          f.pending_key.reset(to_node(std::move(v)));
          f.expect_key = false;
        } else {
          f.node.force_insert(f.pending_key, to_node(std::move(v)));
          f.expect_key = true;
        }
        break;
    }
  }

  std::vector<Frame> stack_;
};

#ifdef CROSSDEV_HAVE_LIBYAML
// libyaml's event parser drives the collector: the same events as yaml-cpp's parser, ~8x faster
// (a 280k-row, 50 MB matrix: 1.2 s instead of 9 s). Returns false on a syntax error; the caller
// then asks yaml-cpp, whose messages the matrix tests pin.
bool collect_with_libyaml(const std::string& text, Collector& collector) {
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) return false;
  yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(text.data()), text.size());
  bool ok = true, done = false;
  int documents = 0;
  try {
    while (!done) {
      yaml_event_t event;
      if (!yaml_parser_parse(&parser, &event)) {
        ok = false;
        break;
      }
      YAML::Mark mark;
      mark.pos = static_cast<int>(event.start_mark.index);
      mark.line = static_cast<int>(event.start_mark.line);
      mark.column = static_cast<int>(event.start_mark.column);
      const auto anchor = [](const yaml_char_t* a) { return a ? YAML::anchor_t{1} : YAML::NullAnchor; };
      switch (event.type) {
        case YAML_DOCUMENT_START_EVENT:
          if (++documents > 1) done = true;  // yaml-cpp's Load reads the first document only
          break;
        case YAML_DOCUMENT_END_EVENT:
        case YAML_STREAM_END_EVENT:
          done = true;
          break;
        case YAML_SCALAR_EVENT: {
          const auto& sc = event.data.scalar;
          const std::string value(reinterpret_cast<const char*>(sc.value), sc.length);
          const bool plain = sc.style == YAML_PLAIN_SCALAR_STYLE && !sc.tag;
          if (plain && (value.empty() || value == "~" || value == "null" || value == "Null" || value == "NULL")) {
            collector.OnNull(mark, anchor(sc.anchor));
          } else {
            collector.OnScalar(mark, sc.tag ? reinterpret_cast<const char*>(sc.tag) : "", anchor(sc.anchor), value);
          }
          break;
        }
        case YAML_SEQUENCE_START_EVENT:
          collector.OnSequenceStart(mark, "", anchor(event.data.sequence_start.anchor), YAML::EmitterStyle::Default);
          break;
        case YAML_SEQUENCE_END_EVENT: collector.OnSequenceEnd(); break;
        case YAML_MAPPING_START_EVENT:
          collector.OnMapStart(mark, "", anchor(event.data.mapping_start.anchor), YAML::EmitterStyle::Default);
          break;
        case YAML_MAPPING_END_EVENT: collector.OnMapEnd(); break;
        case YAML_ALIAS_EVENT: collector.OnAlias(mark, YAML::NullAnchor); break;
        default: break;
      }
      yaml_event_delete(&event);
    }
  } catch (...) {
    yaml_parser_delete(&parser);
    throw;
  }
  yaml_parser_delete(&parser);
  return ok;
}
#endif

// The same compact form from a node tree: the reader for documents with anchors and aliases,
// which the event collector does not resolve.
RawValue raw_from_node(const YAML::Node& n, int default_line, int depth);

RawMap raw_map_from_node(const YAML::Node& n, int default_line) {
  RawMap m;
  m.line = line_of(n, default_line);
  std::vector<std::string> seen;
  for (auto it = n.begin(); it != n.end(); ++it) {
    RawValue key;
    key.line = line_of(it->first, default_line);
    key.kind = it->first.IsScalar() ? RawValue::Scalar : it->first.IsMap() ? RawValue::Map : RawValue::Seq;
    if (key.kind == RawValue::Scalar) key.scalar = it->first.Scalar();
    bool ok = false;
    note_key(m.problem, seen, key, &ok);
    m.fields.push_back(to_field(ok ? key.scalar : std::string(), raw_from_node(it->second, m.line, 3)));
    seen.push_back(m.fields.back().key);
  }
  return m;
}

RawValue raw_from_node(const YAML::Node& n, int default_line, int depth) {
  RawValue v;
  v.line = line_of(n, default_line);
  if (n.IsScalar()) {
    v.kind = RawValue::Scalar;
    v.scalar = n.Scalar();
  } else if (n.IsMap() || n.IsSequence()) {
    v.kind = n.IsMap() ? RawValue::Map : RawValue::Seq;
    if (depth >= 3) {
      v.node = std::make_shared<const YAML::Node>(n);
    } else if (n.IsMap()) {
      v.map = raw_map_from_node(n, default_line);
      v.collected = true;
    } else {
      for (const auto& item : n) v.items.push_back(raw_from_node(item, v.line, depth + 1));
      v.collected = true;
    }
  }
  return v;
}

RawTop raw_top_from_node(const YAML::Node& doc) {
  RawTop top;
  if (!doc.IsMap()) return top;
  top.is_map = true;
  RawMap m = raw_map_from_node(doc, 1);
  top.problem = m.problem;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const std::string key = it->first.IsScalar() ? it->first.Scalar() : std::string();
    top.entries.emplace_back(key, raw_from_node(it->second, 1, 1));
  }
  return top;
}

}  // namespace

MatrixFile load_matrix_file(const std::string& path, const SuiteSchema* (*schema_for)(const std::string& suite),
                            std::uintmax_t max_bytes) {
  RawTop top;
  {
    std::string text;
    try {
      text = read_input_file(path, max_bytes, "--max-matrix-bytes");
    } catch (const InputFileError& e) {
      throw YamlError({path, 0}, std::string("cannot read matrix file: ") + e.what());
    }
    try {
      Collector collector;
#ifdef CROSSDEV_HAVE_LIBYAML
      const bool parsed = collect_with_libyaml(text, collector);
#else
      const bool parsed = false;
#endif
      if (!parsed) {  // yaml-cpp: its error messages (and its reading of anything libyaml refuses)
        collector = Collector();
        std::istringstream in(text);
        YAML::Parser parser(in);
        parser.HandleNextDocument(collector);
      }
      if (collector.uses_anchors) {
        top = raw_top_from_node(YAML::Load(text));
      } else {
        top = std::move(collector.top);
      }
    } catch (const YAML::Exception& e) {
      throw YamlError({path, e.mark.is_null() ? 0 : e.mark.line + 1}, "YAML syntax error: " + e.msg);
    }
  }
  if (!top.is_map) throw YamlError({path, 1}, "expected a mapping with keys 'suite' and 'cases' at the top level");
  if (!top.problem.message.empty()) throw YamlError({path, top.problem.line}, top.problem.message);

  MatrixFile file;
  file.path = path;
  const auto shared_path = std::make_shared<const std::string>(path);
  RawValue* cases = nullptr;
  RawValue* defaults = nullptr;
  int suite_line = 1;
  for (auto& [key, value] : top.entries) {
    const int line = value.line;
    if (key == "suite") {
      if (value.kind != RawValue::Scalar) throw YamlError({path, line}, "'suite' must be a string");
      file.suite = value.scalar;
      suite_line = line;
    } else if (key == "cases") {
      if (value.kind != RawValue::Seq) throw YamlError({path, line}, "'cases' must be a list of rows");
      cases = &value;
    } else if (key == "defaults") {
      if (value.kind != RawValue::Map) throw YamlError({path, line}, "'defaults' must be a mapping of row keys");
      defaults = &value;
    } else if (key != "description") {
      throw YamlError({path, line}, "unknown top-level key '" + key + "'; expected suite, description, defaults, cases");
    }
  }
  if (file.suite.empty()) throw YamlError({path, 1}, "missing top-level key 'suite'");
  const SuiteSchema* schema = schema_for(file.suite);
  if (!schema) throw YamlError({path, suite_line}, "unknown suite '" + file.suite + "'");
  if (!cases) throw YamlError({path, 1}, "missing top-level key 'cases'");

  std::vector<std::string> allowed = {"id", "source", "intent"};
  allowed.insert(allowed.end(), schema->required.begin(), schema->required.end());
  allowed.insert(allowed.end(), schema->optional.begin(), schema->optional.end());
  std::vector<std::string> required = {"id", "source"};
  required.insert(required.end(), schema->required.begin(), schema->required.end());

  auto check_key = [&](const std::string& key, int line, const char* where) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      throw YamlError({path, line}, std::string("unknown key '") + key + "'" + where + " for suite '" + file.suite +
                                          "'; expected one of " + c10::Join(", ", allowed));
    }
  };
  std::vector<Row::Field> default_fields;
  if (defaults) {
    const RawMap& d = defaults->map;
    if (!d.problem.message.empty()) throw YamlError({path, d.problem.line}, d.problem.message);
    for (const auto& f : d.fields) check_key(f.key, f.line, " in defaults");
    default_fields = d.fields;
  }

  file.rows.reserve(cases->items.size());
  for (RawValue& row_value : cases->items) {
    const int row_line = row_value.line;
    if (row_value.kind != RawValue::Map || !row_value.collected)
      throw YamlError({path, row_line}, "expected a row mapping with id, source and suite keys");
    RawMap& raw = row_value.map;
    if (!raw.problem.message.empty()) throw YamlError({path, raw.problem.line}, raw.problem.message);
    for (const auto& f : raw.fields) check_key(f.key, f.line, "");
    std::vector<Row::Field> fields = std::move(raw.fields);
    for (const auto& d : default_fields) {
      const bool overridden =
          std::any_of(fields.begin(), fields.end(), [&](const Row::Field& f) { return f.key == d.key; });
      if (!overridden) fields.push_back(d);
    }
    for (const auto& key : required) {
      if (std::none_of(fields.begin(), fields.end(), [&](const Row::Field& f) { return f.key == key; })) {
        auto id = std::find_if(fields.begin(), fields.end(), [](const Row::Field& f) { return f.key == "id"; });
        const std::string prefix =
            id != fields.end() && id->kind == Row::FieldKind::Scalar ? "row '" + id->scalar + "': " : "";
        throw YamlError({path, row_line}, prefix + "missing required key '" + key + "' (suite '" + file.suite +
                                                "' rows need: " + c10::Join(", ", required) + ")");
      }
    }
    file.rows.emplace_back(shared_path, row_line, std::move(fields));
  }
  return file;
}

}  // namespace crossdev::yaml
