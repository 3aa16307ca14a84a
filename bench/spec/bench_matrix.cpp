#include "spec/bench_matrix.h"

#include <c10/util/StringUtil.h>

#include <algorithm>
#include <map>
#include <set>

#include "device/host_profile.h"
#include "model/sized_inputs.h"

namespace crossdev::bench {
namespace {

using yaml::Row;

// Parses every element of a scalar-or-list key through `parse`; a bad element fails naming it.
template <typename T, typename Parse>
std::vector<T> list_of(const Row& row, const std::string& key, std::vector<T> when_absent, Parse parse,
                       const std::string& expected) {
  if (!row.has(key)) return when_absent;
  std::vector<T> out;
  for (const std::string& text : row.str_list(key)) {
    std::optional<T> value = parse(text);
    if (!value) row.fail(key, "'" + text + "' is not valid; expected " + expected);
    out.push_back(std::move(*value));
  }
  if (out.empty()) row.fail(key, "expected at least one value (" + expected + ")");
  return out;
}

std::vector<DeviceKind> devices_of(const Row& row) {
  return list_of<DeviceKind>(row, "devices", {DeviceKind::CPU, DeviceKind::CUDA}, kind_from_name, valid_kind_list());
}

void parse_op(const Row& row, RowHeader header, BenchMatrix& out) {
  OpRow op;
  op.header = std::move(header);
  const std::string name = row.str("op");
  op.op = ops::find_op(name);
  if (!op.op) {
    std::vector<std::string> known;
    for (const ops::OpSpec* spec : ops::all_ops()) known.emplace_back(spec->name());
    row.fail("op", "unknown op '" + name + "'; expected one of " + c10::Join(", ", known));
  }
  const std::optional<BenchLayout> layout = find_bench_layout(name);
  if (!layout) {
    std::vector<std::string> benchable;
    for (const BenchLayout& l : bench_layouts()) benchable.emplace_back(l.op);
    row.fail("op", "op '" + name + "' has no bench layout (OpDefinition::bench in its op.cpp); expected one of " +
                       c10::Join(", ", benchable));
  }
  op.impls = list_of<ops::Impl>(row, "impls", ops::all_impls(), ops::impl_from_name, "fused, fallback, torchscript");
  op.dtypes = list_of<at::ScalarType>(row, "dtypes", {at::kFloat}, matrix_float_dtype_from_name, matrix_float_dtype_names());
  if (!row.has("sizes")) row.fail("sizes", "missing key 'sizes' (element counts such as 1M, 8M)");
  op.sizes = list_of<Size>(row, "sizes", {}, size_from_text, "a positive element count such as 4096, 256K or 8M");
  for (const Size& size : op.sizes) {
    if (size.elements % layout->granule != 0) {
      row.fail("sizes", "size " + size.label + " does not fit " + name + "'s bench layout " + layout->description +
                            "; expected a multiple of " + std::to_string(layout->granule) + " elements");
    }
  }
  op.devices = devices_of(row);
  op.passes = list_of<Pass>(row, "passes", {Pass::Forward, Pass::ForwardBackward}, pass_from_name, pass_names());
  if (row.has("seed")) {
    const long long seed = row.integer("seed");
    if (seed < 0) row.fail("seed", "expected a non-negative integer");
    op.seed = static_cast<std::uint64_t>(seed);
  }
  const std::string origin = op.header.id + " (" + op.header.where.str() + ")";
  for (const Size& size : op.sizes) {
    for (at::ScalarType dtype : op.dtypes) {
      for (DeviceKind device : op.devices) {
        for (Pass pass : op.passes) {
          for (ops::Impl impl : op.impls) {
            const std::string case_key = name + "/" + ops::impl_name(impl) + "/" + dtype_name(dtype) + "/" +
                                     std::to_string(size.elements) + "/" + kind_name(device) + "/" + pass_name(pass);
            auto [it, inserted] = out.op_case_origin.emplace(case_key, origin);
            if (!inserted) {
              row.fail("op", "case " + std::string(ops::impl_name(impl)) + "/" + dtype_name(dtype) + "/" + size.label +
                                 "/" + kind_name(device) + "/" + pass_name(pass) + " of op '" + name +
                                 "' is already registered by row " + it->second);
            }
          }
        }
      }
    }
  }
  out.ops.push_back(std::move(op));
}

void parse_resolve(const Row& row, RowHeader header, BenchMatrix& out) {
  ResolveRow r;
  r.header = std::move(header);
  r.request_text = row.str_or("request", "none");
  if (r.request_text != "none") {
    DeviceSpec spec;
    std::string why;
    if (try_parse_device(r.request_text, spec, &why) != ParseStatus::Ok) row.fail("request", why);
    r.request = spec;
  }
  r.host = row.str("host");
  try {
    (void)HostProfile::named_or_spec(r.host);
  } catch (const std::exception& e) {
    row.fail("host", std::string(e.what()) + " (named hosts: " + named_host_list() + ")");
  }
  const std::string preset = row.str_or("policy", "torchdevice");
  r.preset = find_preset(preset);
  if (!r.preset) row.fail("policy", "unknown policy preset '" + preset + "'; expected one of " + preset_names());
  const std::string via = row.str_or("via", "create");
  const std::optional<Via> parsed_via = via_from_name(via);
  if (!parsed_via) row.fail("via", "unknown via '" + via + "'; expected create, to or implicit");
  r.via = *parsed_via;
  r.include_parse = row.boolean_or("parse", false);
  if (r.include_parse && !r.request) row.fail("parse", "parse: true needs a request to parse");
  out.resolves.push_back(std::move(r));
}

void parse_bandwidth(const Row& row, RowHeader header, BenchMatrix& out) {
  out.bandwidth.push_back(BandwidthRow{std::move(header), devices_of(row)});
}

struct Kind {
  const char* name;
  std::vector<std::string> required;
  std::vector<std::string> optional;
  void (*parse)(const Row&, RowHeader, BenchMatrix&);
};

const std::vector<Kind>& kinds() {
  static const std::vector<Kind> table = {
      {"op", {"op", "sizes"}, {"impls", "dtypes", "devices", "passes", "seed"}, parse_op},
      {"policy_resolve", {"host"}, {"request", "policy", "via", "parse"}, parse_resolve},
      {"bandwidth", {}, {"devices"}, parse_bandwidth},
  };
  return table;
}

const Kind* find_kind(const std::string& name) {
  for (const Kind& kind : kinds()) {
    if (name == kind.name) return &kind;
  }
  return nullptr;
}

// The loader checks keys against one schema per suite; the union of every kind's keys is that
// schema, and each row is then held to its own kind's keys below.
const yaml::SuiteSchema* bench_schema(const std::string& suite) {
  static const yaml::SuiteSchema schema = [] {
    yaml::SuiteSchema s;
    s.required = {"kind"};
    std::set<std::string> optional = {"profile"};
    for (const Kind& kind : kinds()) {
      optional.insert(kind.required.begin(), kind.required.end());
      optional.insert(kind.optional.begin(), kind.optional.end());
    }
    s.optional.assign(optional.begin(), optional.end());
    return s;
  }();
  return suite == "bench" ? &schema : nullptr;
}

std::vector<std::string> kind_names() {
  std::vector<std::string> names;
  for (const Kind& kind : kinds()) names.emplace_back(kind.name);
  return names;
}

}  // namespace

BenchMatrix load_bench_matrix(const std::string& path) {
  yaml::MatrixFile file = yaml::load_matrix_file(path, &bench_schema);
  BenchMatrix matrix;
  matrix.path = path;
  std::map<std::string, SourceLocation> first_seen;
  for (const Row& row : file.rows) {
    auto [it, inserted] = first_seen.emplace(row.id(), row.where());
    if (!inserted) row.fail("id", "duplicate id '" + row.id() + "' (first defined at " + it->second.str() + ")");

    const std::string kind_name = row.str("kind");
    const Kind* kind = find_kind(kind_name);
    if (!kind) row.fail("kind", "unknown kind '" + kind_name + "'; expected one of " + c10::Join(", ", kind_names()));
    std::vector<std::string> allowed = {"id", "source", "intent", "kind", "profile"};
    allowed.insert(allowed.end(), kind->required.begin(), kind->required.end());
    allowed.insert(allowed.end(), kind->optional.begin(), kind->optional.end());
    for (const std::string& key : row.keys()) {
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        row.fail(key, "key '" + key + "' does not apply to kind '" + kind_name + "'; expected one of " + c10::Join(", ", allowed));
      }
    }
    for (const std::string& key : kind->required) {
      if (!row.has(key)) row.fail("kind", "kind '" + kind_name + "' needs key '" + key + "'");
    }

    RowHeader header{row.id(), row.where(), Profile::Default};
    const std::string profile = row.str_or("profile", "default");
    const std::optional<Profile> parsed = profile_from_name(profile);
    if (!parsed) row.fail("profile", "unknown profile '" + profile + "'; expected one of " + profile_names());
    header.profile = *parsed;
    kind->parse(row, std::move(header), matrix);
  }
  return matrix;
}

std::string bench_kind_summary() {
  std::string out;
  for (const Kind& kind : kinds()) {
    out += std::string("  ") + kind.name + ": requires " + (kind.required.empty() ? "-" : c10::Join(", ", kind.required)) +
           "; optional " + c10::Join(", ", kind.optional) + "\n";
  }
  return out;
}

}  // namespace crossdev::bench
