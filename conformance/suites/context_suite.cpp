// suite: context — per-device execution contexts and limits (seeds 001 and 004).
//
//   - {id: ctx.inference.tpu, source: "seed 001: TPU Version Counter Errors",
//      device: tpu, check: inference, expect: no_grad}
//
// check: autocast        autocast device_type string ("tpu" -> "xla")
//        inference       the context the policy picks: inference_mode | no_grad
//        inference_guard the context InferenceContextGuard really enters, observed through
//                        c10's thread-local InferenceMode / GradMode state
//        compile         eligible | disabled
//        distributed     ok | error  (with expect_error: the exact message)
#include <memory>

#include <c10/core/GradMode.h>
#include <c10/core/InferenceMode.h>

#include "device/device_spec.h"
#include "policy/context_policy.h"
#include "runner/suite.h"
#include "runner/suite_table.h"

namespace crossdev::conformance {
namespace {

constexpr const char* kChecks[] = {"autocast", "inference", "inference_guard", "compile", "distributed"};

std::string observe_guard(DeviceKind kind) {
  InferenceContextGuard guard(kind);
  if (c10::InferenceMode::is_enabled()) return "inference_mode";
  if (!c10::GradMode::is_enabled()) return "no_grad";
  return "grad";
}

std::string actual_for(const std::string& check, DeviceKind kind, std::string* error_text) {
  if (check == "autocast") return autocast_device_type(kind);
  if (check == "inference") return inference_context_name(inference_context_for(kind));
  if (check == "inference_guard") return observe_guard(kind);
  if (check == "compile") return compile_eligibility(kind).eligible ? "eligible" : "disabled";
  // distributed: exercise the throwing API, since that is what callers use.
  try {
    require_distributed_supported(kind);
    return "ok";
  } catch (const PolicyError& e) {
    *error_text = e.what();
    return "error";
  }
}

class ContextSuite final : public Suite {
 public:
  const char* name() const override { return "context"; }
  const SuiteSchema& schema() const override {
    static const SuiteSchema s{{"device", "check", "expect"}, {"expect_error"}};
    return s;
  }

  void validate(const Row& row) const override {
    std::string error;
    DeviceSpec spec;
    if (try_parse_device(row.str("device"), spec, &error) != ParseStatus::Ok) row.fail("device", error);
    const std::string check = row.str("check");
    bool known = false;
    for (const char* c : kChecks) known |= check == c;
    if (!known) row.fail("check", "unknown check '" + check + "'; expected autocast, inference, inference_guard, compile or distributed");
    if (row.has("expect_error") && check != "distributed") row.fail("expect_error", "only valid with check: distributed");
  }

  std::vector<CaseResult> run(const Row& row, const RunContext& ctx) const override {
    const DeviceSpec spec = parse_device(row.str("device"));
    const std::string check = row.str("check");
    const std::string expect = row.str("expect");
    CaseResult r = result_for(row, *this);
    r.device = spec.str();
    r.execution = ctx.host.provenance(spec.kind) == Provenance::Real ? Execution::Real : Execution::Simulated;
    std::string error_text;
    const std::string actual = actual_for(check, spec.kind, &error_text);
    r.details = {{"check", check}, {"expected", expect}, {"actual", actual}};
    if (!error_text.empty()) r.details.emplace_back("error", error_text);
    if (actual != expect) {
      r.status = Status::Fail;
      r.message = check + " on " + spec.str() + ": expected '" + expect + "', got '" + actual + "'";
    } else if (row.has("expect_error") && error_text != row.str("expect_error")) {
      r.status = Status::Fail;
      r.message = "error text: expected '" + row.str("expect_error") + "', got '" + error_text + "'";
    }
    return {r};
  }
};

}  // namespace

std::unique_ptr<Suite> make_context_suite() { return std::make_unique<ContextSuite>(); }

}  // namespace crossdev::conformance
