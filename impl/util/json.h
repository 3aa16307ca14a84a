#pragma once
// Minimal streaming JSON writer (output only: bundles are read back by Python tools).
#include <string>
#include <string_view>
#include <vector>

namespace crossdev::json {

std::string escape(std::string_view text);  // RFC 8259 string body, non-ASCII passed through as UTF-8

class Writer {
 public:
  explicit Writer(int indent = 2) : indent_(indent) {}
  Writer& begin_object();
  Writer& end_object();
  Writer& begin_array();
  Writer& end_array();
  Writer& key(std::string_view k);
  Writer& value(std::string_view v);
  Writer& value(const char* v) { return value(std::string_view(v)); }
  Writer& value(const std::string& v) { return value(std::string_view(v)); }
  Writer& value(bool v);
  Writer& value(double v);  // NaN/inf become null: JSON has no spelling for them
  Writer& value(long long v);
  Writer& value(int v) { return value(static_cast<long long>(v)); }
  Writer& null();
  Writer& raw(std::string_view json_text);  // pre-serialised JSON value
  template <class T>
  Writer& field(std::string_view k, const T& v) { key(k); return value(v); }
  const std::string& str() const { return out_; }

 private:
  void before_value();
  void newline();
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
  int indent_;
};

}  // namespace crossdev::json
