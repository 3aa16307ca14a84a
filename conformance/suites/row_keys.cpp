#include "suites/row_keys.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "device/device_kind.h"

namespace crossdev::conformance {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// `tolerance`: {rtol: R, atol: A} for every dtype of the row, or {<dtype>: {rtol: R, atol: A}, ...}
// per dtype. Both keys, as in the ops suite's rows: a lone rtol would silently keep the table's atol.
constexpr const char* kToleranceForms =
    "expected {rtol: <number>, atol: <number>} (every dtype of the row) or {<dtype>: {rtol: <number>, atol: <number>}, ...}";

bool is_all_dtypes_form(const YAML::Node& node) { return node["rtol"] || node["atol"]; }

// The (rtol, atol) of one entry; a bad entry is a YamlError at the row's key (file:line).
std::pair<double, double> tolerance_pair(const Row& row, const std::string& key, const YAML::Node& entry,
                                         const std::string& what) {
  if (!entry.IsMap() || entry.size() != 2 || !entry["rtol"] || !entry["atol"])
    row.fail(key, what + "expected exactly {rtol: <number>, atol: <number>}; " + kToleranceForms);
  double rtol = -1, atol = -1;
  if (!YAML::convert<double>::decode(entry["rtol"], rtol) || !YAML::convert<double>::decode(entry["atol"], atol) ||
      !(rtol >= 0) || !(atol >= 0) || !std::isfinite(rtol) || !std::isfinite(atol))
    row.fail(key, what + "rtol and atol must be finite numbers >= 0");
  return {rtol, atol};
}

void validate_tolerance(const Row& row, const std::string& key) {
  const YAML::Node& node = row.node(key);
  if (!node.IsMap() || node.size() == 0) row.fail(key, kToleranceForms);
  if (is_all_dtypes_form(node)) {
    tolerance_pair(row, key, node, "");
    return;
  }
  for (auto it = node.begin(); it != node.end(); ++it) tolerance_pair(row, key, it->second, it->first.Scalar() + ": ");
}

// <key>: {<dtype>: {"rtol", "atol"}} (the every-dtype form spelled out for the row's dtypes) and
// "<key>_where": the row's file:line, which each case names as its tolerance's source.
void write_tolerance(json::Writer& w, const Row& row, const std::string& key) {
  const YAML::Node& node = row.node(key);
  auto write_pair = [&](const std::string& dtype, const YAML::Node& entry) {
    const auto [rtol, atol] = tolerance_pair(row, key, entry, dtype + ": ");
    w.key(dtype).begin_object().field("rtol", rtol).field("atol", atol).end_object();
  };
  w.key(key).begin_object();
  if (is_all_dtypes_form(node)) {
    for (const auto& dtype : row.str_list("dtypes")) write_pair(dtype, node);
  } else {
    for (auto it = node.begin(); it != node.end(); ++it) write_pair(it->first.Scalar(), it->second);
  }
  w.end_object();
  w.field(key + "_where", row.where(key).str());
}

void write_list(json::Writer& w, const std::string& key, const std::vector<std::string>& values) {
  w.key(key).begin_array();
  for (const auto& v : values) w.value(v);
  w.end_array();
}

}  // namespace

void validate_row_key(const Row& row, const RowKeySpec& k) {
  if (!row.has(k.key)) return;
  const std::string& key = k.key;
  switch (k.type) {
    case RowKeyType::Globs: {
      const auto globs = row.str_list(key);
      if (globs.empty() || std::any_of(globs.begin(), globs.end(), [](const std::string& g) { return g.empty(); }))
        row.fail(key, "expected " + k.expected);
      break;
    }
    case RowKeyType::DeviceKinds: {
      const auto kinds = row.str_list(key);
      if (kinds.empty()) row.fail(key, "expected at least one device kind; expected one of " + valid_kind_list());
      for (const auto& d : kinds)
        if (!kind_from_name(d)) row.fail(key, "unknown device kind '" + d + "'; expected one of " + valid_kind_list());
      break;
    }
    case RowKeyType::Names:  // the values: the worker's check, against the key's choices
      if (row.str_list(key).empty())
        row.fail(key, "expected " + (k.choices.empty() ? k.expected : "one or more of " + joined(k.choices)));
      break;
    case RowKeyType::List: row.str_list(key); break;
    case RowKeyType::String: row.str(key); break;
    case RowKeyType::Factory:
      if (row.str(key).find(':') == std::string::npos) row.fail(key, "expected " + k.expected);
      break;
    case RowKeyType::Choice: {
      const std::string value = row.str(key);
      if (std::find(k.choices.begin(), k.choices.end(), value) == k.choices.end()) {
        std::string label = key;
        std::replace(label.begin(), label.end(), '_', ' ');
        row.fail(key, "unknown " + label + " '" + value + "'; expected one of " + joined(k.choices));
      }
      break;
    }
    case RowKeyType::Count:
      if (row.integer(key) < 1) row.fail(key, "expected " + (k.expected.empty() ? std::string("an integer >= 1") : k.expected));
      break;
    case RowKeyType::Seconds:
      if (!(row.number(key) > 0)) row.fail(key, "expected seconds > 0");
      break;
    case RowKeyType::Boolean: row.boolean(key); break;
    case RowKeyType::Tolerance: validate_tolerance(row, key); break;
  }
}

void write_row_key(json::Writer& w, const Row& row, const RowKeySpec& k) {
  const std::string& key = k.key;
  switch (k.type) {
    case RowKeyType::Globs: {  // one glob, or a list of them (any of which selects)
      const auto globs = row.str_list(key);
      if (globs.size() == 1)
        w.field(key, globs.front());
      else
        write_list(w, key, globs);
      break;
    }
    case RowKeyType::DeviceKinds:
    case RowKeyType::Names:
    case RowKeyType::List: write_list(w, key, row.str_list(key)); break;
    case RowKeyType::String:
    case RowKeyType::Factory:
    case RowKeyType::Choice: w.field(key, row.str(key)); break;
    case RowKeyType::Count: w.field(key, row.integer(key)); break;
    case RowKeyType::Seconds: w.field(key, row.number(key)); break;
    case RowKeyType::Boolean: w.field(key, row.boolean(key)); break;
    case RowKeyType::Tolerance: write_tolerance(w, row, key); break;
  }
}

}  // namespace crossdev::conformance
