#pragma once
// A JSON reader for the lines the engine's workers write (docs/python-worker.md): one value per text,
// in Python's `json` dialect, so NaN, Infinity and -Infinity are numbers as `json.dumps` writes them.
// Every value remembers where its text lies in the parsed text, so an object can be passed on verbatim
// (a case's `data`). The writer is util/json.h.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace crossdev::json {

struct Value {
  enum class Type { Null, Bool, Number, String, Array, Object };
  Type type = Type::Null;
  bool boolean = false;
  double number = 0.0;
  std::string string;                                  // decoded (UTF-8)
  std::vector<Value> items;                            // an array's elements
  std::vector<std::pair<std::string, Value>> members;  // an object's members, in their written order
  std::size_t begin = 0, end = 0;                      // [begin, end) of this value's text in the parsed text

  bool is(Type t) const { return type == t; }
  // The first member named `key` (nullptr when there is none, or when this is not an object).
  const Value* find(std::string_view key) const;
  // A member's string or number, or `when_absent` when it is missing or of another type.
  std::string string_or(std::string_view key, std::string when_absent = "") const;
  double number_or(std::string_view key, double when_absent) const;
};

// The one value `text` holds (surrounding white space allowed); nullopt, with `*error` saying where and
// what was expected, when it is not JSON.
std::optional<Value> parse(std::string_view text, std::string* error = nullptr);

// A number as Python's json writes it, non-finite values included (NaN, Infinity, -Infinity): for the
// workers' lines, which carry every metric exactly (util/json.h's Writer writes null for those, as the
// bundle, read by any JSON reader, must).
std::string number_token(double v, const char* format = "%.17g");

}  // namespace crossdev::json
