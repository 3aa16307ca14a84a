#include "ops/library/op_predicates.h"

#include <map>
#include <mutex>

#include <c10/core/DispatchKey.h>
#include <c10/core/TensorOptions.h>

#include "ops/eligibility.h"
#include "ops/library/call_marshal.h"

namespace crossdev::ops::library {
namespace {

Predicate native_kernel_registered(const OpDefinition* definition) {
  return {"device_has_fused_kernel", [definition](const OpCall& call) -> std::string {
            const c10::Device device = call_device(call);
            if (has_native_kernel(*definition, device)) return "";
            return "device " + device.str() + ": crossdev::" + definition->name + " has no kernel for dispatch key " +
                   c10::toString(backend_key(device)) +
                   ", so the dispatcher runs its CompositeExplicitAutograd kernel (the fallback)";
          }};
}

OpPredicates build(const OpDefinition& def) {
  OpPredicates p;
  p.common = {required_inputs_present(def.inputs), input_dtypes_consistent(def.inputs), inputs_on_one_device()};
  p.common.insert(p.common.end(), def.validity.begin(), def.validity.end());
  p.fused = {native_kernel_registered(&def), fused_dtype_supported()};
  p.fused.insert(p.fused.end(), def.fused_only.begin(), def.fused_only.end());
  return p;
}

}  // namespace

const OpPredicates& predicates_of(const OpDefinition& definition) {
  static std::mutex mutex;
  static std::map<const OpDefinition*, OpPredicates> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(&definition);
  if (it == cache.end()) it = cache.emplace(&definition, build(definition)).first;
  return it->second;  // std::map nodes never move
}

std::vector<PredicateResult> eligibility(const OpDefinition& definition, bool fused, const OpCall& call) {
  const OpPredicates& p = predicates_of(definition);
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

c10::DispatchKey backend_key(c10::Device device) {
  return c10::computeDispatchKey(std::nullopt, std::nullopt, device);
}

bool has_native_kernel(const OpDefinition& definition, c10::Device device) {
  const c10::DispatchKey key = backend_key(device);
  if (key == c10::DispatchKey::Meta) return false;
  return operator_handle(definition.name).hasKernelForDispatchKey(key);
}

}  // namespace crossdev::ops::library
