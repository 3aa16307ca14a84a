// suite: ops — numerical parity of every op implementation (seed 000's fused ops and their
// device-compatible fallbacks) on every device and dtype. One row expands into one case per
// (device, dtype, shape set, impl): "<row id>/<device>/<dtype>/<shape set>/<impl>".
//
//   - id: ops.modulate
//     source: "seed 000: device_compatible_modulate"
//     op: modulate
//     dtypes: [float32, float16, bfloat16, float64]     # default: these four
//     shape_sets: [basic, empty, odd_tail]              # default: all of the op's shape sets
//     devices: [cpu, cuda, mps, xpu, xla]               # default: all; absent ones are skipped
//     impls: [fused, fallback, torchscript]             # default: all three
//     checks: [forward, backward]                       # or [dropout] (needs training, 0 < p < 1)
//     tolerance: {float16: {rtol: 2e-3, atol: 1e-4}}    # per dtype; default: assert_close's table
//     grad_tolerance: {...}                             # gradients; default: `tolerance`
//     seed: 0, p: 0.1, training: true, scalars: {eps: 1e-6}   # input/scalar overrides
//
// A candidate row checks any dispatcher op (TORCH_LIBRARY, torch.library.custom_op) instead of
// crossdev's implementations, fed the op's inputs, against a reference op (default
// crossdev::<op>), with the same shape sets, tolerances, checks and expectations; its cases end
// in "/candidate". The ops must exist and fit the op's inputs when the row is validated
// (parity/dispatcher_op.h), else file:line:
//
//   - {id: mylib.modulate, op: modulate, candidate: "mylib::fused_modulate", reference: "crossdev::modulate"}
//
// Expectations: <matrix folder>/expectations/ops/<device kind>.yaml (suites/expectation_files.h).
#include "suites/ops_suite.h"

#include <c10/util/StringUtil.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

#include "device/device_kind.h"
#include "log/logger.h"
#include "ops/op_spec.h"
#include "parity/dispatcher_op.h"
#include "util/dtype_names.h"
#include "parity/expectations.h"
#include "suites/expectation_files.h"
#include "parity/op_parity.h"
#include "parity/ops_repro_sample.h"
#include "runner/python_runtimes.h"
#include "runner/run_context.h"
#include "runner/suite.h"
#include "sim/simulated_device.h"
#include "runner/suite_table.h"

namespace crossdev::conformance {
namespace {

struct CheckName {
  const char* name;
  bool parity::ParityConfig::*flag;
};
constexpr CheckName kChecks[] = {
    {"forward", &parity::ParityConfig::forward},
    {"backward", &parity::ParityConfig::backward},
    {"dropout", &parity::ParityConfig::dropout},
};

// What one case runs: one of the op's implementations, or the row's candidate op.
struct Subject {
  std::string name;               // "fused", "fallback", "torchscript", "candidate"
  std::optional<ops::Impl> impl;  // nullopt: the candidate
};
constexpr const char* kCandidate = "candidate";

struct OpsRow {
  const ops::OpSpec* op = nullptr;
  std::optional<parity::DispatcherOp> candidate, reference;  // candidate rows only
  std::vector<DeviceKind> devices;
  std::vector<at::ScalarType> dtypes;
  std::vector<std::string> shape_sets;
  std::vector<ops::Impl> impls;
  parity::ParityConfig config;  // tolerances resolved per dtype at run time
  std::map<at::ScalarType, parity::Tolerance> tolerance, grad_tolerance;

  std::vector<Subject> subjects() const {
    if (candidate) return {{kCandidate, std::nullopt}};
    std::vector<Subject> out;
    for (ops::Impl impl : impls) out.push_back({ops::impl_name(impl), impl});
    return out;
  }

  parity::ParityConfig config_for(at::ScalarType dtype) const {
    parity::ParityConfig c = config;
    const auto pick = [&](const std::map<at::ScalarType, parity::Tolerance>& table, parity::Tolerance when_absent) {
      auto it = table.find(dtype);
      return it == table.end() ? when_absent : it->second;
    };
    c.output_tolerance = pick(tolerance, parity::default_tolerance(dtype));
    c.grad_tolerance = pick(grad_tolerance, c.output_tolerance);
    return c;
  }
};

// A list key whose entries are looked up by name; absent -> `when_absent`, unknown -> file:line.
template <class T, class Lookup>
std::vector<T> parse_list(const Row& row, const std::string& key, Lookup lookup, const std::string& valid,
                          std::vector<T> when_absent) {
  if (!row.has(key)) return when_absent;
  std::vector<T> out;
  for (const std::string& name : row.str_list(key)) {
    std::optional<T> value = lookup(name);
    if (!value) row.fail(key, "unknown entry '" + name + "'; expected one of " + valid);
    if (std::find(out.begin(), out.end(), *value) != out.end()) row.fail(key, "duplicate entry '" + name + "'");
    out.push_back(*value);
  }
  return out;
}

std::map<at::ScalarType, parity::Tolerance> parse_tolerances(const Row& row, const std::string& key) {
  std::map<at::ScalarType, parity::Tolerance> out;
  if (!row.has(key)) return out;
  const YAML::Node& node = row.node(key);
  if (!node.IsMap()) row.fail(key, "expected a mapping {<dtype>: {rtol: <number>, atol: <number>}}");
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string name = it->first.Scalar();
    const auto dtype = matrix_float_dtype_from_name(name);
    if (!dtype) row.fail(key, "unknown dtype '" + name + "'; expected one of " + matrix_float_dtype_names());
    const YAML::Node entry = it->second;  // a copy: the iterator's proxy is a temporary
    // Both or neither, as assert_close insists: a lone rtol would silently keep the default atol.
    if (!entry.IsMap() || entry.size() != 2 || !entry["rtol"] || !entry["atol"])
      row.fail(key, name + ": expected exactly {rtol: <number>, atol: <number>}");
    parity::Tolerance t;
    if (!YAML::convert<double>::decode(entry["rtol"], t.rtol) || !YAML::convert<double>::decode(entry["atol"], t.atol) ||
        t.rtol < 0 || t.atol < 0)
      row.fail(key, name + ": rtol and atol must be non-negative numbers");
    out[*dtype] = t;
  }
  return out;
}

// The row's `key` op, found in the dispatcher and fitted to `op`'s inputs; else file:line.
parity::DispatcherOp dispatcher_op(const Row& row, const std::string& key, const std::string& name, const ops::OpSpec& op) {
  try {
    return parity::DispatcherOp(name, op);
  } catch (const parity::DispatcherOpError& e) {
    row.fail(key, e.what());
  }
}

OpsRow parse_row(const Row& row) {
  OpsRow r;
  const std::string op_name = row.str("op");
  r.op = ops::find_op(op_name);
  if (!r.op) {
    std::vector<std::string> names;
    for (const ops::OpSpec* op : ops::all_ops()) names.emplace_back(op->name());
    row.fail("op", "unknown op '" + op_name + "'; expected one of " + c10::Join(", ", names));
  }
  r.devices = parse_list<DeviceKind>(row, "devices", [](const std::string& n) { return kind_from_name(n); },
                                     valid_kind_list(), {kAllDeviceKinds.begin(), kAllDeviceKinds.end()});
  r.dtypes = parse_list<at::ScalarType>(row, "dtypes", [](const std::string& n) { return matrix_float_dtype_from_name(n); },
                                        matrix_float_dtype_names(), {at::kFloat, at::kHalf, at::kBFloat16, at::kDouble});
  const std::vector<std::string> op_sets = r.op->shape_sets();
  r.shape_sets = parse_list<std::string>(
      row, "shape_sets",
      [&](const std::string& n) {
        return std::find(op_sets.begin(), op_sets.end(), n) != op_sets.end() ? std::optional<std::string>(n) : std::nullopt;
      },
      c10::Join(", ", op_sets) + " (shape sets of op '" + op_name + "')", op_sets);
  r.impls = parse_list<ops::Impl>(row, "impls", [](const std::string& n) { return ops::impl_from_name(n); },
                                  "fused, fallback, torchscript", ops::all_impls());
  if (row.has("candidate")) {
    if (row.has("impls")) row.fail("impls", "a candidate row checks its candidate, not crossdev's impls; remove 'impls'");
    r.candidate = dispatcher_op(row, "candidate", row.str("candidate"), *r.op);
    r.reference = dispatcher_op(row, "reference", row.str_or("reference", "crossdev::" + op_name), *r.op);
  } else if (row.has("reference")) {
    row.fail("reference", "a reference needs a 'candidate' to check against it (crossdev's own impls are checked "
                          "against the op's fallback)");
  }

  std::vector<std::string> check_names = {"forward", "backward"};
  if (row.has("checks")) check_names = row.str_list("checks");
  for (const CheckName& c : kChecks) r.config.*c.flag = false;
  for (const std::string& name : check_names) {
    const auto it = std::find_if(std::begin(kChecks), std::end(kChecks), [&](const CheckName& c) { return name == c.name; });
    if (it == std::end(kChecks)) row.fail("checks", "unknown check '" + name + "'; expected forward, backward, dropout");
    r.config.*it->flag = true;
  }

  const long long seed = row.has("seed") ? row.integer("seed") : 0;
  if (seed < 0) row.fail("seed", "expected a non-negative integer");
  r.config.seed = static_cast<std::uint64_t>(seed);
  if (row.has("scalars")) {
    const YAML::Node& node = row.node("scalars");
    if (!node.IsMap()) row.fail("scalars", "expected a mapping {<name>: <number>}");
    for (auto it = node.begin(); it != node.end(); ++it) {
      double v = 0;
      const YAML::Node value = it->second;
      if (!value.IsScalar() || !YAML::convert<double>::decode(value, v)) row.fail("scalars", it->first.Scalar() + ": expected a number");
      r.config.scalars[it->first.Scalar()] = v;
    }
  }
  if (row.has("p")) {
    const double p = row.number("p");
    if (!(p >= 0.0 && p <= 1.0)) row.fail("p", "expected a probability in [0, 1]");
    r.config.scalars["p"] = p;
  }
  if (row.has("training")) r.config.training = row.boolean("training");
  if (r.config.dropout) {
    if (r.config.training != std::optional<bool>(true)) row.fail("checks", "the dropout check needs 'training: true'");
    const double p = row.has("p") ? row.number("p") : 0.0;
    if (!(p > 0.0 && p < 1.0)) row.fail("checks", "the dropout check needs 'p' strictly between 0 and 1");
  }
  r.tolerance = parse_tolerances(row, "tolerance");
  r.grad_tolerance = parse_tolerances(row, "grad_tolerance");
  return r;
}

c10::Device device_of(DeviceKind kind) {
  const DeviceKindInfo& info = kind_info(kind);
  return kind == DeviceKind::CPU ? c10::Device(info.c10_type) : c10::Device(info.c10_type, 0);
}

struct CaseKey {
  DeviceKind kind;
  at::ScalarType dtype;
  std::string shape_set;
  Subject subject;
  std::string id;  // "<row id>/<device kind>/<dtype>/<shape set>/<impl or candidate>"
  bool same_inputs(const CaseKey& o) const { return kind == o.kind && dtype == o.dtype && shape_set == o.shape_set; }
};

// The cross product, impls innermost so that consecutive cases share inputs and references.
std::vector<CaseKey> expand(const Row& row, const OpsRow& r) {
  std::vector<CaseKey> keys;
  for (DeviceKind kind : r.devices)
    for (at::ScalarType dtype : r.dtypes)
      for (const std::string& shape_set : r.shape_sets)
        for (const Subject& subject : r.subjects())
          keys.push_back({kind, dtype, shape_set, subject,
                          row.id() + "/" + kind_name(kind) + "/" + dtype_name(dtype) + "/" + shape_set + "/" +
                              subject.name});
  return keys;
}

// Expectation files are read once per process; their errors are YamlErrors (exit code 2). An ops file
// where the layout before <folder>/expectations/<suite>/<kind>.yaml kept it is refused, not ignored.
const parity::ExpectationFile& expectations_for(const std::string& matrix_file, DeviceKind kind) {
  const std::string path = expectations_path(matrix_file, "ops", kind_name(kind));
  const std::filesystem::path old_path =
      std::filesystem::path(matrix_file).parent_path() / "expectations" / (std::string(kind_name(kind)) + ".yaml");
  std::error_code ec;
  if (std::filesystem::exists(old_path, ec))
    throw YamlError(SourceLocation{old_path.string(), 1},
                    "the ops suite's expectations for " + std::string(kind_name(kind)) + " are read from " + path +
                        " (every suite's: expectations/<suite>/<kind>.yaml); move this file there");
  return cached_expectations(path);
}

void warn_stale_once(const std::string& matrix_file) {
  static std::mutex mutex;
  static std::set<std::string> done;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!done.insert(matrix_file).second) return;
  }
  const MatrixFile matrix = load_matrix_file(matrix_file, &schema_for_suite);
  for (const std::string& warning : stale_expectation_warnings(matrix))
    Logger::global().log(LogLevel::Warning, "parity", warning);
}

void record(const parity::ImplOutcome& o, CaseResult& r) {
  r.metrics = {{"max_abs", o.max_abs}, {"max_rel", o.max_rel}, {"max_ulp", o.max_ulp},
               {"mismatches", static_cast<double>(o.mismatches)}};
  std::string references;
  for (const auto& c : o.comparisons) {
    const std::string ref = parity::reference_name(c.reference);
    if (references.find(ref) == std::string::npos) references += (references.empty() ? "" : ",") + ref;
    r.details.emplace_back(c.label(), c.comparison.summary());
  }
  r.details.emplace_back("references", references);
  if (!o.first_mismatch.empty()) r.details.emplace_back("first_mismatch", o.first_mismatch);
  if (o.dropout) {
    r.metrics.emplace_back("keep_rate", o.dropout->keep_rate);
    r.metrics.emplace_back("expected_keep_rate", o.dropout->expected_keep_rate);
    r.metrics.emplace_back("keep_rate_sigmas", o.dropout->deviation_sigmas);
    r.details.emplace_back("dropout", o.dropout->summary());
  }
  switch (o.verdict) {
    case parity::Verdict::Pass:
      r.status = Status::Pass;
      break;
    case parity::Verdict::Fail:
      r.status = Status::Fail;
      r.message = o.message;
      break;
    case parity::Verdict::NotEligible:  // dispatch would not pick it here either: not a parity result
      r.status = Status::Skip;
      r.execution = Execution::NotRun;
      r.message = o.message;
      break;
    case parity::Verdict::GraphFuserUnavailable:  // seed 000's failure class, reported as such
      r.status = Status::Fail;
      r.message = o.message;
      r.details.emplace_back("failure_class", "graph_fuser_unavailable");
      break;
  }
}

// A failing or erroring case's inputs and calls, for `crossdev repro` (parity/ops_repro_sample.h): the
// record in details.repro_sample, or why there is none in details.repro.
void add_repro_record(const OpsRow& r, const CaseKey& key, const parity::ParityConfig& config,
                      const parity::OpParity& parity, CaseResult& c) {
  if (r.config.dropout) {
    c.details.emplace_back("repro", "a dropout check is judged by the law of its draws, not by one sample's values: "
                                    "no script compares it");
    return;
  }
  if (!key.subject.impl) {
    c.details.emplace_back("repro", "a candidate row's case: `crossdev repro` writes scripts for crossdev's own "
                                    "implementations only (docs/repro.md)");
    return;
  }
  std::vector<std::string> comparisons = {parity::reference_name(parity::Reference::Golden)};
  if (*key.subject.impl != ops::Impl::Fallback)
    comparisons.emplace_back(parity::reference_name(parity::Reference::FusedVsFallback));
  if (key.kind != DeviceKind::CPU) comparisons.emplace_back(parity::reference_name(parity::Reference::VsCpu));
  const parity::OpsReproRecord record = parity::ops_repro_record(
      {r.op->name(), key.subject.name, key.dtype, kind_name(key.kind), &config, &parity.inputs(), parity.grad_out(),
       r.op->grad_inputs(), comparisons, c.status == Status::Error});
  if (record.json.empty()) {
    c.details.emplace_back("repro", record.why_not);
  } else {
    c.details.emplace_back("repro_sample", record.json);
  }
}

class OpsSuite final : public Suite {
 public:
  const char* name() const override { return "ops"; }
  const SuiteSchema& schema() const override {
    static const SuiteSchema s{{"op"},
                               {"dtypes", "shape_sets", "devices", "impls", "checks", "tolerance", "grad_tolerance", "seed",
                                "p", "training", "scalars", "candidate", "reference"}};
    return s;
  }

  void validate(const Row& row) const override {
    const OpsRow r = parse_row(row);
    for (DeviceKind kind : r.devices) expectations_for(row.file(), kind);
    warn_stale_once(row.file());
  }

  std::vector<CaseResult> run(const Row& row, const RunContext& ctx) const override {
    const OpsRow r = parse_row(row);
    std::vector<CaseResult> results;
    std::unique_ptr<parity::OpParity> parity;  // shared by the impls of one (device, dtype, shape set)
    const CaseKey* parity_key = nullptr;
    const std::vector<CaseKey> keys = expand(row, r);
    for (const CaseKey& key : keys) {
      if (!parity_key || !key.same_inputs(*parity_key)) {
        parity.reset();
        parity_key = &key;
      }
      const auto start = std::chrono::steady_clock::now();
      // A kind the host only simulates runs on the sim backend with that kind's emulation
      // profile (docs/sim-backend.md); a real device always takes precedence.
      c10::Device device = device_of(key.kind);
      std::optional<sim::SimulatedDevice> simulated;
      if (ctx.host.provenance(key.kind) == Provenance::Simulated) {
        simulated = sim::device_for_simulated_kind(key.kind, 0, ctx.host);
        if (simulated) device = simulated->device;
      }
      const parity::ParityConfig config = r.config_for(key.dtype);
      CaseResult c = result_for(row, *this);
      c.id = key.id;
      c.device = device.str();
      c.details = {{"op", r.op->name()}, {"impl", key.subject.name}, {"dtype", dtype_name(key.dtype)},
                   {"shape_set", key.shape_set}, {"tolerance", config.output_tolerance.str()}};
      if (r.candidate) {
        c.details.emplace_back("candidate", r.candidate->name());
        c.details.emplace_back("reference", r.reference->name());
      }
      if (simulated) c.details.emplace_back("simulated_as", simulated->label());
      // Dtype support is the emulated kind's (mps-like has no float64), not the sim device's.
      const std::vector<at::ScalarType> supported = ops::dtypes_for_device(device_of(key.kind));
      const parity::Expectation* expected =
          expectations_for(row.file(), key.kind).find(c.id, simulated ? "simulated" : "real");
      c.execution = simulated ? Execution::Simulated : Execution::Real;
      if (const auto elsewhere = not_in_this_process(key.kind, ctx.host)) {
        c.status = Status::Skip;  // torch_xla's xla: a Python runtime this process has not imported
        c.execution = Execution::NotRun;
        c.message = *elsewhere;
      } else if (ctx.host.provenance(key.kind) != Provenance::Real && !simulated) {
        c.status = Status::Skip;
        c.execution = Execution::NotRun;
        c.message = ctx.not_simulated_reason.empty()
                        ? "device not present (simulate it with --simulate " + std::string(kind_name(key.kind)) + ")"
                        : "device not present, and not simulated: " + ctx.not_simulated_reason;
      } else if (std::find(supported.begin(), supported.end(), key.dtype) == supported.end()) {
        c.status = Status::Skip;
        c.execution = Execution::NotRun;
        c.message = std::string(dtype_name(key.dtype)) + " is not supported on " + kind_name(key.kind);
      } else if (expected && expected->status == parity::ExpectedStatus::Skip) {
        c.status = Status::Skip;
        c.execution = Execution::NotRun;
        c.message = "expected skip (" + expected->reason + ", " + expected->where() + ")";
      } else {
        try {
          if (!parity) {
            parity = r.reference ? std::make_unique<parity::OpParity>(*r.op, key.shape_set, key.dtype, device, config,
                                                                      r.reference->name(), *r.reference)
                                 : std::make_unique<parity::OpParity>(*r.op, key.shape_set, key.dtype, device, config);
          }
          record(key.subject.impl ? parity->check(*key.subject.impl) : parity->check(r.candidate->name(), *r.candidate), c);
        } catch (const std::exception& e) {
          c.status = Status::Error;
          c.message = describe_exception(e);  // a user's Python op: "ValueError: ..." (runner/run_context.h)
        }
        if ((c.status == Status::Fail || c.status == Status::Error) && parity) add_repro_record(r, key, config, *parity, c);
        if (expected) apply_xfail(*expected, c);
      }
      c.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      results.push_back(std::move(c));
    }
    return results;
  }

  std::vector<PlannedCase> plan(const Row& row, const RunContext& ctx) const override {
    std::vector<PlannedCase> out;
    for (const CaseKey& key : expand(row, parse_row(row))) {
      PlannedCase c;
      c.id = key.id;
      c.device_kind = kind_name(key.kind);
      // As in run(): a simulated kind runs on the sim backend, an absent one is skipped before
      // any expectation applies.
      const bool simulated = ctx.host.provenance(key.kind) == Provenance::Simulated &&
                             sim::device_for_simulated_kind(key.kind, 0, ctx.host).has_value();
      const bool runs = simulated || (ctx.host.provenance(key.kind) == Provenance::Real &&
                                      !not_in_this_process(key.kind, ctx.host));
      const parity::Expectation* e =
          runs ? expectations_for(row.file(), key.kind).find(key.id, simulated ? "simulated" : "real") : nullptr;
      if (e) {
        c.expected = parity::expected_status_name(e->status);
        c.reason = e->reason;
        c.where = e->where();
      }
      out.push_back(std::move(c));
    }
    return out;
  }
};

}  // namespace

std::vector<std::string> ops_case_ids(const Row& row) {
  std::vector<std::string> ids;
  for (const CaseKey& key : expand(row, parse_row(row))) ids.push_back(key.id);
  return ids;
}

std::vector<std::string> stale_expectation_warnings(const MatrixFile& matrix) {
  std::map<DeviceKind, std::vector<std::string>> ids_by_kind;
  for (const Row& row : matrix.rows)
    for (const CaseKey& key : expand(row, parse_row(row))) ids_by_kind[key.kind].push_back(key.id);
  std::vector<std::string> warnings;
  for (DeviceKind kind : kAllDeviceKinds) {
    const parity::ExpectationFile& file = expectations_for(matrix.path, kind);
    for (const parity::Expectation* e : file.stale(ids_by_kind[kind])) {
      warnings.push_back(e->where() + ": stale expectation '" + e->match + "' (" + parity::expected_status_name(e->status) +
                         ") matches no case of " + matrix.path);
    }
  }
  return warnings;
}

std::unique_ptr<Suite> make_ops_suite() { return std::make_unique<OpsSuite>(); }

}  // namespace crossdev::conformance
