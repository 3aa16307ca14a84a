#include "util/json_value.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace crossdev::json {
namespace {

constexpr int kMaxDepth = 256;  // deeper nesting is refused, never a stack overflow

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  std::optional<Value> document(std::string* error) {
    Value v;
    skip_space();
    if (value(&v, 0)) {
      skip_space();
      if (i_ == s_.size()) return v;
      fail("the end of the text after its one value");
    }
    if (error) *error = "offset " + std::to_string(at_) + ": expected " + expected_;
    return std::nullopt;
  }

 private:
  bool fail(const char* expected) {
    if (expected_.empty()) {
      expected_ = expected;
      at_ = i_;
    }
    return false;
  }
  void skip_space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  bool literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }

  bool value(Value* v, int depth) {
    if (depth > kMaxDepth) return fail("at most 256 nested arrays and objects");
    v->begin = i_;
    if (i_ >= s_.size()) return fail("a value");
    const char c = s_[i_];
    bool ok;
    if (c == '{') {
      ok = object(v, depth);
    } else if (c == '[') {
      ok = array(v, depth);
    } else if (c == '"') {
      v->type = Value::Type::String;
      ok = string(&v->string);
    } else if (literal("true") || literal("false")) {
      v->type = Value::Type::Bool;
      v->boolean = c == 't';
      ok = true;
    } else if (literal("null")) {
      ok = true;
    } else {
      ok = number(v);
    }
    v->end = i_;
    return ok;
  }

  // The elements of an array or an object up to `close`, each read by `element`, separated by commas.
  template <class Element>
  bool elements(char close, const char* expected, Element element) {
    ++i_;  // the opening bracket
    skip_space();
    if (i_ < s_.size() && s_[i_] == close) return ++i_, true;
    for (;;) {
      skip_space();
      if (!element()) return false;
      skip_space();
      if (i_ < s_.size() && s_[i_] == ',') {
        ++i_;
        continue;
      }
      if (i_ < s_.size() && s_[i_] == close) return ++i_, true;
      return fail(expected);
    }
  }

  bool object(Value* v, int depth) {
    v->type = Value::Type::Object;
    return elements('}', "',' or '}' in an object", [&] {
      std::string key;
      if (i_ >= s_.size() || s_[i_] != '"') return fail("a member name in double quotes");
      if (!string(&key)) return false;
      skip_space();
      if (i_ >= s_.size() || s_[i_] != ':') return fail("':' after a member name");
      ++i_;
      skip_space();
      Value member;
      if (!value(&member, depth + 1)) return false;
      v->members.emplace_back(std::move(key), std::move(member));
      return true;
    });
  }

  bool array(Value* v, int depth) {
    v->type = Value::Type::Array;
    return elements(']', "',' or ']' in an array", [&] {
      Value item;
      if (!value(&item, depth + 1)) return false;
      v->items.push_back(std::move(item));
      return true;
    });
  }

  bool hex4(unsigned* out) {
    if (i_ + 4 > s_.size()) return fail("four hex digits after \\u");
    unsigned v = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = s_[i_ + k];
      v <<= 4;
      if (h >= '0' && h <= '9') v |= static_cast<unsigned>(h - '0');
      else if (h >= 'a' && h <= 'f') v |= static_cast<unsigned>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') v |= static_cast<unsigned>(h - 'A' + 10);
      else return fail("four hex digits after \\u");
    }
    i_ += 4;
    *out = v;
    return true;
  }

  static void append_utf8(std::string* out, unsigned cp) {
    if (cp < 0x80) {
      *out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      *out += static_cast<char>(0xC0 | (cp >> 6));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      *out += static_cast<char>(0xE0 | (cp >> 12));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      *out += static_cast<char>(0xF0 | (cp >> 18));
      *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  bool string(std::string* out) {
    ++i_;  // the opening quote
    for (;;) {
      if (i_ >= s_.size()) return fail("the closing '\"' of a string");
      const char c = s_[i_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) {
        --i_;
        return fail("no raw control character inside a string");
      }
      if (c != '\\') {
        *out += c;
        continue;
      }
      if (i_ >= s_.size()) return fail("an escape after '\\'");
      const char e = s_[i_++];
      switch (e) {
        case '"': *out += '"'; break;
        case '\\': *out += '\\'; break;
        case '/': *out += '/'; break;
        case 'b': *out += '\b'; break;
        case 'f': *out += '\f'; break;
        case 'n': *out += '\n'; break;
        case 'r': *out += '\r'; break;
        case 't': *out += '\t'; break;
        case 'u': {
          unsigned cp;
          if (!hex4(&cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00 && s_.substr(i_, 2) == "\\u") {  // a surrogate pair: one code point
            const std::size_t at = i_;
            i_ += 2;
            unsigned low;
            if (!hex4(&low)) return false;
            if (low >= 0xDC00 && low < 0xE000) cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            else i_ = at;
          }
          if (cp >= 0xD800 && cp < 0xE000) cp = 0xFFFD;  // a lone surrogate has no UTF-8 spelling
          append_utf8(out, cp);
          break;
        }
        default: --i_; return fail("one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX");
      }
    }
  }

  bool number(Value* v) {
    v->type = Value::Type::Number;
    if (literal("NaN")) return v->number = std::numeric_limits<double>::quiet_NaN(), true;
    if (literal("Infinity")) return v->number = std::numeric_limits<double>::infinity(), true;
    if (literal("-Infinity")) return v->number = -std::numeric_limits<double>::infinity(), true;
    const std::size_t start = i_;
    auto digits = [&] {
      const std::size_t from = i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      return i_ > from;
    };
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    if (!digits()) return fail("a value (object, array, string, number, true, false or null)");
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      if (!digits()) return fail("digits after a decimal point");
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (!digits()) return fail("digits in an exponent");
    }
    v->number = std::strtod(std::string(s_.substr(start, i_ - start)).c_str(), nullptr);
    return true;
  }

  std::string_view s_;
  std::size_t i_ = 0;
  std::string expected_;
  std::size_t at_ = 0;
};

}  // namespace

const Value* Value::find(std::string_view key) const {
  for (const auto& [k, v] : members)
    if (k == key) return &v;
  return nullptr;
}

std::string Value::string_or(std::string_view key, std::string when_absent) const {
  const Value* v = find(key);
  return v && v->is(Type::String) ? v->string : when_absent;
}

double Value::number_or(std::string_view key, double when_absent) const {
  const Value* v = find(key);
  return v && v->is(Type::Number) ? v->number : when_absent;
}

std::optional<Value> parse(std::string_view text, std::string* error) { return Parser(text).document(error); }

std::string number_token(double v, const char* format) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buf[40];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace crossdev::json
