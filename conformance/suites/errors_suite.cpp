// suite: errors — the error classifier (matrices/data/error_patterns.yaml) and device_safe's
// recoveries, one behaviour per row (matrices/errors.yaml).
//
// Classification rows:
//   - {id: ..., text: "<PyTorch's verbatim message>", exception: RuntimeError, expect_category: out_of_memory}
//   - {id: ..., trigger: dtype_mismatch_mm, text: "<substring the real error must contain>", expect_category: ...}
//     `trigger` makes the installed LibTorch raise the error for real (manager/error_triggers.h);
//     the row then checks that `text` really is in that message and classifies the real one.
// Recovery rows add `op` and run real tensors through device_safe:
//   op: matmul | add | huge_alloc | load_checkpoint     host: named host (default cpu-only)
//   device: first attempt's device   inputs_on: device per input   dtypes: dtype per input
//   inject_on / inject_when / inject_times: fault injection of `text` (else the op's real error)
//   inference: inference_mode | no_grad   max_attempts   corrupt: true (wrong result after a recovery)
//   expect_result: ok | recovered | rethrown | exhausted | recovery_failed | rejected | needs_new_process
//   expect_recovery: actions applied, in order   expect_attempts   expect_device   expect_dtype
// A recovered result is compared with a float64 reference computed on the cpu from the
// original inputs (torch.testing.assert_close tolerances for the result dtype); a rethrown
// error must be the very exception object the call raised.
#include <unistd.h>

#include "util/named_table.h"

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <memory>

#include <ATen/ATen.h>

#include "manager/checkpoint.h"
#include "manager/device_safe.h"
#include "manager/error_triggers.h"
#include "manager/fault_injection.h"
#include "runner/suite.h"
#include "runner/suite_table.h"

namespace crossdev::conformance {
namespace {

using namespace crossdev::manager;

constexpr const char* kOps[] = {"matmul", "add", "huge_alloc", "load_checkpoint"};
constexpr const char* kResults[] = {"ok", "recovered", "rethrown", "exhausted", "recovery_failed", "rejected", "needs_new_process"};

struct Case {
  std::string text, exception, expect_category, trigger;
  std::vector<std::string> trigger_texts;  // a trigger's real message must contain one of these
  bool recover = false;
  std::string op;
  HostProfile host;
  DeviceSpec device;
  std::vector<DeviceSpec> inputs_on;
  std::vector<c10::ScalarType> dtypes;
  bool inject = false;
  Fault fault;
  std::optional<InferenceContext> inference;
  int max_attempts = 3;
  bool corrupt = false;
  std::string expect_result;
  std::vector<std::string> expect_recovery;
  std::optional<int> expect_attempts;
  std::optional<DeviceSpec> expect_device;
  std::optional<c10::ScalarType> expect_dtype;
};

DeviceSpec device_of(const Row& row, const std::string& key, const std::string& text) {
  DeviceSpec spec;
  std::string error;
  if (try_parse_device(text, spec, &error) != ParseStatus::Ok) row.fail(key, error);
  return canonical_device(spec);
}

c10::ScalarType dtype_of(const Row& row, const std::string& key, const std::string& text) {
  const auto dtype = dtype_from_name(text);
  if (!dtype) row.fail(key, "unknown dtype '" + text + "'; expected one of " + all_dtype_names());
  return *dtype;
}

std::size_t input_count(const std::string& op) { return op == "matmul" || op == "add" ? 2 : 1; }

Case parse_case(const Row& row) {
  Case c;
  if (row.has("trigger") && row.has("text")) {
    // The same call can raise different texts depending on what is loaded (torch's Python meta
    // registrations replace TensorIterator's message), so a trigger row may list each one.
    c.trigger_texts = row.str_list("text");
    c.text = c.trigger_texts.front();
  } else {
    c.text = row.str_or("text", "");
  }
  c.exception = row.str_or("exception", "RuntimeError");
  if (!is_known_error_type(c.exception))
    row.fail("exception", "unknown exception type '" + c.exception + "'; expected one of " + error_type_list());
  c.expect_category = row.str("expect_category");
  const auto& known = required_error_categories();
  if (c.expect_category != "unclassified" && std::find(known.begin(), known.end(), c.expect_category) == known.end()) {
    row.fail("expect_category", "unknown category '" + c.expect_category + "'; expected one of " + named::names(known) +
                                    ", unclassified");
  }
  c.trigger = row.str_or("trigger", "");
  if (!c.trigger.empty() && !find_error_trigger(c.trigger))
    row.fail("trigger", "unknown trigger '" + c.trigger + "'; expected one of " + error_trigger_list());
  c.op = row.str_or("op", "");
  c.recover = !c.op.empty();
  if (!c.recover) {
    for (const char* key : {"host", "device", "inputs_on", "dtypes", "inject_on", "inject_when", "inject_times", "inference",
                            "max_attempts", "corrupt", "expect_result", "expect_recovery", "expect_attempts", "expect_device",
                            "expect_dtype"})
      if (row.has(key)) row.fail(key, "only valid in a recovery row (one with 'op')");
    if (c.text.empty() && c.trigger.empty()) row.fail("text", "a classification row needs 'text' or 'trigger'");
    return c;
  }
  if (!named::contains(kOps, c.op)) row.fail("op", "unknown op '" + c.op + "'; expected one of " + named::names(kOps));
  if (!c.trigger.empty()) row.fail("trigger", "a recovery row raises its error through 'op' or injection, not 'trigger'");
  const std::string host = row.str_or("host", "cpu-only");
  try {
    c.host = HostProfile::named_or_spec(host);
  } catch (const std::exception&) {
    row.fail("host", "unknown host '" + host + "'; expected one of " + named_host_list() + ", or a simulate spec");
  }
  c.device = device_of(row, "device", row.str_or("device", "cpu"));
  const std::size_t n = input_count(c.op);
  if (row.has("inputs_on")) {
    for (const auto& d : row.str_list("inputs_on")) c.inputs_on.push_back(device_of(row, "inputs_on", d));
    if (c.inputs_on.size() != n) row.fail("inputs_on", "op " + c.op + " takes " + std::to_string(n) + " input(s)");
  } else {
    c.inputs_on.assign(n, c.device);
  }
  if (row.has("dtypes")) {
    for (const auto& d : row.str_list("dtypes")) c.dtypes.push_back(dtype_of(row, "dtypes", d));
    if (c.dtypes.size() != n) row.fail("dtypes", "op " + c.op + " takes " + std::to_string(n) + " input(s)");
  } else {
    c.dtypes.assign(n, c10::ScalarType::Float);
  }
  for (const auto& d : c.inputs_on)
    if (d.kind != DeviceKind::CPU && !c.host.has(d.kind)) row.fail("inputs_on", d.str() + " is not on host " + host);
  if (c.device.kind != DeviceKind::CPU && !c.host.has(c.device.kind)) row.fail("device", c.device.str() + " is not on host " + host);

  c.inject = row.has("inject_on") || row.has("inject_when");
  if (c.inject) {
    if (c.text.empty()) row.fail("text", "fault injection needs the verbatim 'text' to raise");
    c.fault.site = c.op;
    c.fault.type = c.exception;
    c.fault.text = c.text;
    if (row.has("inject_on")) {
      const auto kind = kind_from_name(row.str("inject_on"));
      if (!kind) row.fail("inject_on", "unknown device kind '" + row.str("inject_on") + "'; expected one of " + valid_kind_list());
      c.fault.device = *kind;
    }
    if (row.has("inject_when")) {
      c.fault.when = row.str_list("inject_when");
      for (const auto& w : c.fault.when)
        if (!is_fault_condition(w)) row.fail("inject_when", "unknown condition '" + w + "'; expected one of " + fault_condition_list());
    }
    c.fault.times = static_cast<int>(row.has("inject_times") ? row.integer("inject_times") : -1);
  } else if (row.has("inject_times")) {
    row.fail("inject_times", "needs inject_on or inject_when");
  }
  if (row.has("inference")) {
    const std::string ctx = row.str("inference");
    if (ctx == "inference_mode") c.inference = InferenceContext::InferenceMode;
    else if (ctx == "no_grad") c.inference = InferenceContext::NoGrad;
    else row.fail("inference", "expected inference_mode or no_grad");
  }
  c.max_attempts = static_cast<int>(row.has("max_attempts") ? row.integer("max_attempts") : 3);
  if (c.max_attempts < 1 || c.max_attempts > 10) row.fail("max_attempts", "expected 1..10");
  c.corrupt = row.boolean_or("corrupt", false);
  c.expect_result = row.has("expect_result") ? row.str("expect_result") : "";
  if (!named::contains(kResults, c.expect_result)) row.fail("expect_result", "expected one of " + named::names(kResults));
  if (row.has("expect_recovery")) {
    c.expect_recovery = row.str_list("expect_recovery", /*allow_null=*/true);
    if (c.expect_recovery.size() == 1 && c.expect_recovery[0].empty()) c.expect_recovery.clear();
    for (const auto& a : c.expect_recovery)
      if (!find_recovery(a)) row.fail("expect_recovery", "unknown recovery '" + a + "'; expected one of " + recovery_action_list());
  }
  if (row.has("expect_attempts")) c.expect_attempts = static_cast<int>(row.integer("expect_attempts"));
  if (row.has("expect_device")) c.expect_device = device_of(row, "expect_device", row.str("expect_device"));
  if (row.has("expect_dtype")) c.expect_dtype = dtype_of(row, "expect_dtype", row.str("expect_dtype"));
  return c;
}

// ---- classification -------------------------------------------------------------------

void run_classification(const Case& c, CaseResult& r) {
  ErrorInfo info{c.exception, c.text};
  if (!c.trigger.empty()) {
    try {
      find_error_trigger(c.trigger)->fire();
      r.status = Status::Fail;
      r.message = "trigger " + c.trigger + " raised nothing";
      return;
    } catch (...) {
      info = describe_exception(std::current_exception());
    }
    r.details.emplace_back("real_error", info.type + ": " + info.message);
    bool found = c.trigger_texts.empty();
    for (const auto& text : c.trigger_texts) found = found || info.message.find(text) != std::string::npos;
    if (!found) {
      std::string expected;
      for (const auto& text : c.trigger_texts) expected += (expected.empty() ? "'" : " or '") + text + "'";
      r.status = Status::Fail;
      r.message = "the matrix text is not what LibTorch raised: expected it to contain " + expected + ", got '" + info.message + "'";
      return;
    }
    if (info.type != c.exception) {
      r.status = Status::Fail;
      r.message = "exception type: expected " + c.exception + ", LibTorch raised " + info.type;
      return;
    }
  }
  const auto cls = ErrorClassifier::builtin().classify(info);
  const std::string actual = cls ? cls->category->name : "unclassified";
  r.details.emplace_back("expected", c.expect_category);
  r.details.emplace_back("actual", actual);
  if (cls) r.details.emplace_back("pattern", cls->pattern->where);
  if (actual != c.expect_category) {
    r.status = Status::Fail;
    r.message = "classified as " + actual + (cls ? " by " + cls->pattern->where : "") + ", expected " + c.expect_category;
  }
}

// ---- recovery -------------------------------------------------------------------------

std::vector<at::Tensor> make_inputs(const Case& c) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(/*seed=*/20261121);
  if (c.op == "matmul") return {at::randn({4, 5}, gen, at::TensorOptions().dtype(c.dtypes[0])),
                                at::randn({5, 3}, gen, at::TensorOptions().dtype(c.dtypes[1]))};
  if (c.op == "add") return {at::randn({4, 5}, gen, at::TensorOptions().dtype(c.dtypes[0])),
                             at::randn({4, 5}, gen, at::TensorOptions().dtype(c.dtypes[1]))};
  return {at::randn({3, 4}, gen, at::TensorOptions().dtype(c.dtypes[0]))};
}

at::Tensor compute(const std::string& op, const std::vector<at::Tensor>& in) {
  if (op == "matmul") return at::matmul(in[0], in[1]);
  if (op == "add") return at::add(in[0], in[1]);
  return in[0].clone();  // load_checkpoint: the reference is the saved tensor
}

struct Tolerance {
  double rtol, atol;
};
// torch.testing.assert_close defaults per dtype.
Tolerance tolerance_for(c10::ScalarType dtype) {
  switch (dtype) {
    case c10::ScalarType::Half: return {1e-3, 1e-5};
    case c10::ScalarType::BFloat16: return {1.6e-2, 1e-5};
    case c10::ScalarType::Float: return {1.3e-6, 1e-5};
    default: return {1e-7, 1e-7};
  }
}

std::string compare_to_reference(const at::Tensor& actual, const at::Tensor& reference) {
  const at::Tensor a = actual.to(c10::kCPU).to(at::kDouble);
  if (a.sizes() != reference.sizes()) return "shape differs from the reference";
  const Tolerance tol = tolerance_for(actual.scalar_type());
  const at::Tensor diff = (a - reference).abs();
  const at::Tensor bound = reference.abs() * tol.rtol + tol.atol;
  if (at::le(diff, bound).all().item<bool>()) return "";
  return "result differs from the float64 reference: max abs diff " + std::to_string(diff.max().item<double>()) +
         " (rtol " + std::to_string(tol.rtol) + ", atol " + std::to_string(tol.atol) + ")";
}

std::string temp_checkpoint_path() {
  static std::atomic<int> counter{0};
  return (std::filesystem::temp_directory_path() /
          ("crossdev_errors_suite_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".pt"))
      .string();
}

void run_recovery(const Case& c, CaseResult& r) {
  DeviceManager manager(c.host);
  const std::vector<at::Tensor> originals = make_inputs(c);
  std::vector<at::Tensor> reference_inputs;
  for (const auto& t : originals) reference_inputs.push_back(t.to(at::kDouble));
  const at::Tensor reference = compute(c.op, reference_inputs);

  std::string checkpoint;
  struct Cleanup {
    std::string path;
    ~Cleanup() { if (!path.empty()) std::remove(path.c_str()); }
  } cleanup;
  if (c.op == "load_checkpoint") {
    checkpoint = cleanup.path = temp_checkpoint_path();
    save_checkpoint(checkpoint, {{"weight", {originals[0], c.inputs_on[0]}}});
  }

  std::exception_ptr raised_by_call;  // the last exception the callable itself raised
  const SafeFn fn = [&](const std::vector<at::Tensor>& in, const AttemptContext& ctx) -> std::vector<at::Tensor> {
    try {
      std::vector<at::Tensor> out;
      if (c.op == "huge_alloc") out = {at::empty({static_cast<int64_t>(1) << 60}, at::TensorOptions(at::kByte).device(ctx.storage))};
      else if (c.op == "load_checkpoint") out = {load_checkpoint(manager, checkpoint, MapLocation::parse(ctx.device.str()))[0].value.tensor};
      else out = {compute(c.op, in)};
      if (c.corrupt && ctx.attempt > 1) out[0] = out[0] + 1;  // a recovery that computes the wrong thing
      return out;
    } catch (...) {
      raised_by_call = std::current_exception();
      throw;
    }
  };
  SafeOptions options;
  options.op = c.op;
  options.device = c.device;
  options.max_attempts = c.max_attempts;
  options.inference = c.inference;
  if (c.op != "huge_alloc")
    options.validate = [&](const std::vector<at::Tensor>& out, const AttemptContext&) { return compare_to_reference(out[0], reference); };

  FaultPlan plan;
  if (c.inject) plan.add(c.fault);
  ScopedFaultPlan scoped(plan);

  SafeReport report;
  std::string actual_result;
  std::vector<at::Tensor> outputs;
  try {
    std::vector<Placed> inputs = place_on(manager, originals, c.inputs_on);
    SafeResult result = device_safe(manager, fn, std::move(inputs), options, &report);
    outputs = std::move(result.outputs);
    actual_result = report.outcome;
  } catch (const RecoveryRejected& e) {
    report = e.report();
    actual_result = "rejected";
    r.details.emplace_back("rejected", e.what());
  } catch (...) {
    actual_result = report.outcome;
    const std::exception_ptr caught = std::current_exception();
    const ErrorInfo info = describe_exception(caught);
    r.details.emplace_back("rethrown", info.type + ": " + info.message.substr(0, 300));
    // Unchanged means the same object: the callable's own exception, or the injected one the
    // first attempt recorded (compared by type and exact text).
    const bool same_object = raised_by_call && caught == raised_by_call;
    const bool same_text = !report.attempts.empty() && info.type == report.attempts.back().error_type &&
                           info.message == report.attempts.back().error_message;
    if (!same_object && !same_text) {
      r.status = Status::Fail;
      r.message = "the rethrown error is not the one the call raised: " + info.type + ": " + info.message;
    }
  }

  std::vector<std::string> applied;
  for (const auto& a : report.attempts) applied.insert(applied.end(), a.recovery.begin(), a.recovery.end());
  std::string applied_text;
  for (const auto& a : applied) applied_text += (applied_text.empty() ? "" : ", ") + a;
  r.details.emplace_back("result", actual_result);
  // What the user must do instead of a retry (restart the process), as device_safe told them.
  if (actual_result == "needs_new_process" && !report.attempts.empty())
    r.details.emplace_back("advice", report.attempts.back().recovery_detail);
  r.details.emplace_back("attempts", report.summary());
  r.details.emplace_back("recovery", applied_text);
  r.metrics.emplace_back("attempts", static_cast<double>(report.attempts.size()));
  r.metrics.emplace_back("injected", static_cast<double>(plan.fired()));
  r.execution = report.simulated ? Execution::Simulated : Execution::Real;
  r.device = report.final_device.str();

  std::vector<std::string> problems;
  if (r.status == Status::Fail) problems.push_back(r.message);
  if (actual_result != c.expect_result) problems.push_back("result: expected " + c.expect_result + ", got " + actual_result);
  const std::string first_category = report.attempts.empty() ? "" : report.attempts.front().category;
  if (c.expect_result != "ok" && c.expect_category != (first_category.empty() ? "unclassified" : first_category))
    problems.push_back("first error classified as " + (first_category.empty() ? std::string("unclassified") : first_category) +
                       ", expected " + c.expect_category);
  if (applied != c.expect_recovery) problems.push_back("recovery: expected [" + [&] {
    std::string s;
    for (const auto& a : c.expect_recovery) s += (s.empty() ? "" : ", ") + a;
    return s;
  }() + "], got [" + applied_text + "]");
  if (c.expect_attempts && static_cast<int>(report.attempts.size()) != *c.expect_attempts)
    problems.push_back("attempts: expected " + std::to_string(*c.expect_attempts) + ", got " + std::to_string(report.attempts.size()));
  if (c.expect_device && !report.final_device.same_device(*c.expect_device))
    problems.push_back("final device: expected " + c.expect_device->str() + ", got " + report.final_device.str());
  if (!outputs.empty()) {
    r.details.emplace_back("result_dtype", dtype_name(outputs[0].scalar_type()));
    if (c.expect_dtype && outputs[0].scalar_type() != *c.expect_dtype)
      problems.push_back(std::string("result dtype: expected ") + dtype_name(*c.expect_dtype) + ", got " + dtype_name(outputs[0].scalar_type()));
    // Belt and braces: device_safe already validated, but a passing row must show it here too.
    const std::string numeric = c.op == "huge_alloc" ? "" : compare_to_reference(outputs[0], reference);
    if (!numeric.empty()) problems.push_back(numeric);
  }
  if (!problems.empty()) {
    r.status = Status::Fail;
    r.message.clear();
    for (const auto& p : problems) r.message += (r.message.empty() ? "" : "; ") + p;
  }
}

class ErrorsSuite final : public Suite {
 public:
  const char* name() const override { return "errors"; }
  const SuiteSchema& schema() const override {
    static const SuiteSchema s{{"expect_category"},
                               {"text", "exception", "trigger", "op", "host", "device", "inputs_on", "dtypes", "inject_on",
                                "inject_when", "inject_times", "inference", "max_attempts", "corrupt", "expect_result",
                                "expect_recovery", "expect_attempts", "expect_device", "expect_dtype"}};
    return s;
  }
  void validate(const Row& row) const override {
    (void)parse_case(row);
    try {
      (void)ErrorClassifier::builtin();  // a broken pattern table is bad input too (exit 2)
    } catch (const YamlError& e) {
      throw YamlError(row.where(), std::string("the classifier's pattern table is invalid: ") + e.what());
    }
  }

  std::vector<CaseResult> run(const Row& row, const RunContext&) const override {
    const Case c = parse_case(row);
    CaseResult r = result_for(row, *this);
    r.device = "cpu";
    r.execution = c.trigger.empty() && !c.recover ? Execution::Simulated : Execution::Real;
    if (c.recover) run_recovery(c, r);
    else run_classification(c, r);
    return {r};
  }
};

}  // namespace

std::unique_ptr<Suite> make_errors_suite() { return std::make_unique<ErrorsSuite>(); }

}  // namespace crossdev::conformance
