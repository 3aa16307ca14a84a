#include "cli/embedded_json.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "cli/args.h"
#include "util/input_file.h"

namespace crossdev::cli {
namespace {

constexpr int kMaxDepth = 128;

// A minimal DOM: enough to check the shape the bundle schema requires.
struct Value {
  enum Type { Null, Bool, Number, String, Array, Object } type = Null;
  std::string text;                                      // strings
  std::vector<std::unique_ptr<Value>> items;             // arrays
  std::vector<std::pair<std::string, std::unique_ptr<Value>>> members;  // objects
  std::size_t offset = 0;
  const Value* member(const std::string& key) const {
    for (const auto& [k, v] : members)
      if (k == key) return v.get();
    return nullptr;
  }
};

const char* type_name(Value::Type t) {
  switch (t) {
    case Value::Null: return "null";
    case Value::Bool: return "true/false";
    case Value::Number: return "a number";
    case Value::String: return "a string";
    case Value::Array: return "an array";
    case Value::Object: return "an object";
  }
  return "?";
}

class Parser {
 public:
  Parser(const std::string& where, const std::string& text) : where_(where), s_(text) {}

  std::unique_ptr<Value> document() {
    skip_ws();
    if (i_ == s_.size()) fail("empty document; expected a JSON object");
    auto v = value(0);
    skip_ws();
    if (i_ != s_.size()) fail("unexpected text after the JSON document");
    return v;
  }
  // Spans [begin, end) of non-finite numbers, to be embedded as null.
  const std::vector<std::pair<std::size_t, std::size_t>>& nonfinite() const { return nonfinite_; }

  [[noreturn]] void fail_at(std::size_t at, const std::string& what) const {
    int line = 1, col = 1;
    for (std::size_t k = 0; k < at && k < s_.size(); ++k) {
      if (s_[k] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw UsageError(where_ + ":" + std::to_string(line) + ":" + std::to_string(col) + ": not valid JSON: " + what);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { fail_at(i_, what); }

  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  bool consume(const char* word) {
    const std::size_t n = std::strlen(word);
    if (s_.compare(i_, n, word) != 0) return false;
    i_ += n;
    return true;
  }

  std::unique_ptr<Value> value(int depth) {
    if (depth > kMaxDepth) fail("nested deeper than " + std::to_string(kMaxDepth) + " levels");
    skip_ws();
    if (i_ >= s_.size()) fail("the document is truncated");
    auto v = std::make_unique<Value>();
    v->offset = i_;
    const char c = s_[i_];
    if (c == '{') {
      v->type = Value::Object;
      ++i_;
      skip_ws();
      if (i_ < s_.size() && s_[i_] == '}') {
        ++i_;
        return v;
      }
      for (;;) {
        skip_ws();
        if (i_ >= s_.size() || s_[i_] != '"') fail("expected a string key");
        std::string key = string();
        skip_ws();
        if (i_ >= s_.size() || s_[i_] != ':') fail("expected ':' after a key");
        ++i_;
        v->members.emplace_back(std::move(key), value(depth + 1));
        skip_ws();
        if (i_ < s_.size() && s_[i_] == ',') {
          ++i_;
          continue;
        }
        if (i_ < s_.size() && s_[i_] == '}') {
          ++i_;
          return v;
        }
        fail(i_ >= s_.size() ? "the document is truncated" : "expected ',' or '}'");
      }
    }
    if (c == '[') {
      v->type = Value::Array;
      ++i_;
      skip_ws();
      if (i_ < s_.size() && s_[i_] == ']') {
        ++i_;
        return v;
      }
      for (;;) {
        v->items.push_back(value(depth + 1));
        skip_ws();
        if (i_ < s_.size() && s_[i_] == ',') {
          ++i_;
          continue;
        }
        if (i_ < s_.size() && s_[i_] == ']') {
          ++i_;
          return v;
        }
        fail(i_ >= s_.size() ? "the document is truncated" : "expected ',' or ']'");
      }
    }
    if (c == '"') {
      v->type = Value::String;
      v->text = string();
      return v;
    }
    if (consume("true") || consume("false")) {
      v->type = Value::Bool;
      return v;
    }
    if (consume("null")) return v;
    const std::size_t begin = i_;
    if (consume("NaN") || consume("Infinity") || consume("-Infinity")) {
      v->type = Value::Number;
      nonfinite_.emplace_back(begin, i_);
      return v;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      v->type = Value::Number;
      number(begin);
      return v;
    }
    fail(std::string("unexpected character '") + c + "'");
  }

  void number(std::size_t begin) {
    auto digits = [&] {
      const std::size_t from = i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      return i_ - from;
    };
    if (s_[i_] == '-') ++i_;
    if (i_ < s_.size() && s_[i_] == '0') {
      ++i_;
    } else if (digits() == 0) {
      fail("expected a digit");
    }
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      if (digits() == 0) fail("expected a digit after '.'");
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (digits() == 0) fail("expected a digit in the exponent");
    }
    const std::string token = s_.substr(begin, i_ - begin);
    if (!std::isfinite(std::strtod(token.c_str(), nullptr))) nonfinite_.emplace_back(begin, i_);
  }

  std::string string() {
    std::string out;
    ++i_;  // opening quote
    while (i_ < s_.size()) {
      const auto c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        ++i_;
        return out;
      }
      if (c < 0x20) fail("control character in a string");
      if (c == '\\') {
        if (++i_ >= s_.size()) break;
        const char e = s_[i_];
        if (e == 'u') {
          for (int k = 1; k <= 4; ++k)
            if (i_ + k >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_ + k]))) fail("bad \\u escape");
          i_ += 5;
          out += '?';
          continue;
        }
        if (!std::strchr("\"\\/bfnrt", e)) fail(std::string("bad escape '\\") + e + "'");
        out += e;
        ++i_;
        continue;
      }
      out += static_cast<char>(c);
      ++i_;
    }
    fail("the document is truncated (unterminated string)");
  }

  std::string where_;
  const std::string& s_;
  std::size_t i_ = 0;
  std::vector<std::pair<std::size_t, std::size_t>> nonfinite_;
};

void expect(const Parser& p, const Value* v, Value::Type type, const std::string& path) {
  if (!v) p.fail_at(0, "missing " + path + " (expected " + type_name(type) + ")");
  if (v->type != type) p.fail_at(v->offset, path + ": expected " + type_name(type) + ", got " + type_name(v->type));
}

}  // namespace

std::string check_embedded_json(const std::string& where, const std::string& text, EmbeddedKind kind) {
  Parser parser(where, text);
  const std::unique_ptr<Value> doc = parser.document();
  expect(parser, doc.get(), Value::Object, "the document");
  if (kind == EmbeddedKind::Benchmarks) {
    const Value* list = doc->member("benchmarks");
    expect(parser, list, Value::Array, "\"benchmarks\"");
    for (std::size_t k = 0; k < list->items.size(); ++k) {
      const Value* b = list->items[k].get();
      const std::string path = "benchmarks[" + std::to_string(k) + "]";
      expect(parser, b, Value::Object, path);
      const Value* name = b->member("name");
      if (!name) parser.fail_at(b->offset, path + ": missing \"name\" (expected a string)");
      expect(parser, name, Value::String, path + ".name");
      for (const char* key : {"real_time", "cpu_time"})
        if (const Value* t = b->member(key); t && t->type != Value::Number && t->type != Value::Null)
          parser.fail_at(t->offset, path + "." + key + ": expected a number, got " + type_name(t->type));
      if (const Value* u = b->member("time_unit")) expect(parser, u, Value::String, path + ".time_unit");
    }
    if (const Value* ctx = doc->member("context")) expect(parser, ctx, Value::Object, "\"context\"");
  }
  // Embed non-finite numbers as null.
  std::string out;
  std::size_t from = 0;
  for (const auto& [b, e] : parser.nonfinite()) {
    out.append(text, from, b - from);
    out += "null";
    from = e;
  }
  out.append(text, from, std::string::npos);
  return out;
}

std::string load_embedded_json(const char* option, const std::string& path, EmbeddedKind kind, std::uintmax_t max_bytes) {
  std::string text;
  try {
    text = read_input_file(path, max_bytes, "--max-matrix-bytes");
  } catch (const InputFileError& e) {
    throw UsageError(std::string(option) + ": cannot read '" + path + "': " + e.what());
  }
  return check_embedded_json(std::string(option) + ": " + path, text, kind);
}

}  // namespace crossdev::cli
