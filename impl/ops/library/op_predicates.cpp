#include "ops/library/op_predicates.h"

#include <c10/core/DispatchKey.h>
#include <c10/core/TensorOptions.h>
#include <c10/util/Exception.h>

#include "ops/eligibility.h"
#include "ops/library/call_marshal.h"

namespace crossdev::ops::library {
namespace {

Predicate native_kernel_registered(const OpDefinition* definition) {
  return {"device_has_fused_kernel",
          [definition](const OpCall& call) -> std::string {
            const c10::Device device = call_device(call);
            if (has_native_kernel(*definition, device)) return "";
            return "device " + device.str() + ": crossdev::" + definition->name + " has no kernel for dispatch key " +
                   c10::toString(backend_key(device)) +
                   ", so the dispatcher runs its CompositeExplicitAutograd kernel (the fallback)";
          },
          CheckError::Runtime};
}

}  // namespace

OpChecks build_checks(const OpDefinition& def) {
  OpChecks c;
  c.common = {required_inputs_present(def.inputs), input_dtypes_consistent(def.inputs), inputs_on_one_device()};
  c.common.insert(c.common.end(), def.validity.begin(), def.validity.end());
  c.kernel_limits = {fused_dtype_supported()};
  c.kernel_limits.insert(c.kernel_limits.end(), def.fused_only.begin(), def.fused_only.end());
  c.fused = {native_kernel_registered(&def)};
  c.fused.insert(c.fused.end(), c.kernel_limits.begin(), c.kernel_limits.end());
  return c;
}

OpPredicates predicates_of(const OpDefinition& definition) {
  return {definition.checks.common, definition.checks.fused};
}

std::vector<PredicateResult> eligibility(const OpDefinition& definition, bool fused, const OpCall& call) {
  const OpPredicates p = predicates_of(definition);
  std::vector<PredicateResult> results;
  results.reserve(p.common.size() + p.fused.size());
  // common[0] is required_inputs_present: a call without its inputs cannot be examined further.
  if (!evaluate(p.common.front(), call, results)) return results;
  for (std::size_t i = 1; i < p.common.size(); ++i) evaluate(p.common[i], call, results);
  if (fused) {
    for (const Predicate& predicate : p.fused) evaluate(predicate, call, results);
  }
  return results;
}

std::vector<PredicateResult> failures(const OpDefinition& definition, bool fused, const OpCall& call) {
  std::vector<PredicateResult> failed;
  for (PredicateResult& r : eligibility(definition, fused, call)) {
    if (!r.ok) failed.push_back(std::move(r));
  }
  return failed;
}

std::string explain(const std::vector<PredicateResult>& failed) {
  std::string text;
  for (const PredicateResult& r : failed) {
    text += text.empty() ? "" : "; ";
    text += r.explanation + " (predicate " + r.predicate + ")";
  }
  return text;
}

const Predicate* first_failure(const std::vector<Predicate>& predicates, const OpCall& call) {
  for (const Predicate& predicate : predicates) {
    if (!predicate.check(call).empty()) return &predicate;
  }
  return nullptr;
}

void raise_invalid_call(const OpDefinition& definition, const char* suffix, const Predicate& failed,
                        const OpCall& call) {
  const std::string message =
      std::string("crossdev::") + definition.name + suffix + ": " + explain(failures(definition, /*fused=*/false, call));
  switch (failed.error) {
    case CheckError::Value:
      TORCH_CHECK_VALUE(false, message);
    case CheckError::Type:
      TORCH_CHECK_TYPE(false, message);
    case CheckError::Index:
      TORCH_CHECK_INDEX(false, message);
    case CheckError::Runtime:
      break;
  }
  TORCH_CHECK(false, message);
}

c10::DispatchKey backend_key(c10::Device device) {
  return c10::computeDispatchKey(std::nullopt, std::nullopt, device);
}

bool has_native_kernel(const OpDefinition& definition, c10::Device device) {
  const c10::DispatchKey key = backend_key(device);
  if (key == c10::DispatchKey::Meta) return false;
  return operator_handle(definition.name).hasKernelForDispatchKey(key);
}

}  // namespace crossdev::ops::library
