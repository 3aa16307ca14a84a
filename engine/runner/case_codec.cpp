#include "runner/case_codec.h"

#include <cstdlib>
#include <vector>

namespace crossdev::conformance {
namespace {

std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\x1f': out += "\\u"; break;
      case '\x1e': out += "\\v"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

std::string unescape_field(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    const char n = s[++i];
    out += n == 't' ? '\t' : n == 'n' ? '\n' : n == 'u' ? '\x1f' : n == 'v' ? '\x1e' : n;
  }
  return out;
}

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (c == sep) out.emplace_back(); else out.back() += c;
  }
  return out;
}

// Pairs are joined with \x1f (unit separator), key and value with \x1e; both are escaped away
// from field text above, so no user string can forge a boundary.
template <class V, class F>
std::string pairs(const std::vector<std::pair<std::string, V>>& items, F fmt) {
  std::string out;
  for (const auto& [k, v] : items) {
    if (!out.empty()) out += '\x1f';
    out += esc(k) + '\x1e' + fmt(v);
  }
  return out;
}

}  // namespace

std::string encode_case(const CaseResult& r) {
  char dur[32];
  std::snprintf(dur, sizeof dur, "%.9g", r.duration_s);
  std::string line = "CASE";
  for (const std::string& f : {r.id, r.row_id, r.suite, r.source, r.intent, r.file, std::to_string(r.line),
                               std::string(status_name(r.status)), r.device,
                               std::string(execution_name(r.execution)), r.message, std::string(dur)})
    line += '\t' + esc(f);
  line += '\t' + pairs(r.metrics, [](double v) {
    char b[40];
    std::snprintf(b, sizeof b, "%.17g", v);
    return std::string(b);
  });
  line += '\t' + pairs(r.details, [](const std::string& v) { return esc(v); });
  if (!r.data_json.empty()) line += '\t' + esc(r.data_json);
  return line;
}

std::optional<CaseResult> decode_case(const std::string& line) {
  const auto f = split(line, '\t');
  if ((f.size() != 15 && f.size() != 16) || f[0] != "CASE") return std::nullopt;  // 16: with `data`
  CaseResult r;
  r.id = unescape_field(f[1]);
  r.row_id = unescape_field(f[2]);
  r.suite = unescape_field(f[3]);
  r.source = unescape_field(f[4]);
  r.intent = unescape_field(f[5]);
  r.file = unescape_field(f[6]);
  r.line = std::atoi(f[7].c_str());
  const auto status = status_named(f[8]);         // by name (case_statuses.json): never an ordinal
  const auto execution = execution_named(f[10]);
  if (!status || !execution) return std::nullopt;  // an unknown name is a malformed record
  r.status = *status;
  r.device = unescape_field(f[9]);
  r.execution = *execution;
  r.message = unescape_field(f[11]);
  r.duration_s = std::strtod(f[12].c_str(), nullptr);
  for (const auto& kv : split(f[13], '\x1f')) {
    const auto parts = split(kv, '\x1e');
    if (parts.size() == 2) r.metrics.emplace_back(unescape_field(parts[0]), std::strtod(parts[1].c_str(), nullptr));
  }
  for (const auto& kv : split(f[14], '\x1f')) {
    const auto parts = split(kv, '\x1e');
    if (parts.size() == 2) r.details.emplace_back(unescape_field(parts[0]), unescape_field(parts[1]));
  }
  if (f.size() == 16) {
    r.data_json = unescape_field(f[15]);
    // Written verbatim into the bundle: anything but an object would break its structure.
    if (r.data_json.size() < 2 || r.data_json.front() != '{' || r.data_json.back() != '}') return std::nullopt;
  }
  return r;
}

std::string encode_oplog(const manager::OpLogEntry& e) {
  char num[64];
  std::snprintf(num, sizeof num, "%.9g\t%.9g", e.ts_ms, e.duration_us);
  std::string line = "OPLOG\t" + std::string(num);
  for (const std::string& f : {e.category, e.op, e.device, e.outcome}) line += '\t' + esc(f);
  line += '\t' + pairs(e.fields, [](const std::string& v) { return esc(v); });
  return line;
}

std::optional<manager::OpLogEntry> decode_oplog(const std::string& line) {
  const auto f = split(line, '\t');
  if (f.size() != 8 || f[0] != "OPLOG") return std::nullopt;
  manager::OpLogEntry e;
  e.ts_ms = std::strtod(f[1].c_str(), nullptr);
  e.duration_us = std::strtod(f[2].c_str(), nullptr);
  e.category = unescape_field(f[3]);
  e.op = unescape_field(f[4]);
  e.device = unescape_field(f[5]);
  e.outcome = unescape_field(f[6]);
  for (const auto& kv : split(f[7], '\x1f')) {
    const auto parts = split(kv, '\x1e');
    if (parts.size() == 2) e.fields.emplace_back(unescape_field(parts[0]), unescape_field(parts[1]));
  }
  return e;
}

}  // namespace crossdev::conformance
