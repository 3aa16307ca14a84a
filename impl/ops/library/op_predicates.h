#pragma once
// The eligibility predicates of an op, built once per definition when the op table adds it
// (OpDefinition::checks): `common` (every implementation: inputs present, dtypes, one device, the
// op's own shape rules) and `fused` (the native kernel of the call's backend is registered, its
// dtype is instantiated, the op's fused-only limits). Each predicate explains itself, so "why
// fused did not run" is a sentence, not a flag.
//
// Two ways to evaluate them:
//   eligibility/failures   every predicate and its explanation: the harness (OpSpec), the
//                          record of dispatch, error messages
//   first_failure          the kernels' hot path: stops at the first failing predicate and
//                          builds no string while they pass; no lock, no lookup by name
#include <string>
#include <vector>

#include "ops/op_definition.h"

namespace crossdev::ops::library {

// The predicate lists of an op, in evaluation order (built by build_checks).
OpChecks build_checks(const OpDefinition& definition);
struct OpPredicates {
  const std::vector<Predicate>& common;
  const std::vector<Predicate>& fused;
};
OpPredicates predicates_of(const OpDefinition& definition);

// Every predicate (common, then fused ones when `fused`), in order. A call missing a required
// input stops after that first predicate.
std::vector<PredicateResult> eligibility(const OpDefinition& definition, bool fused, const OpCall& call);
std::vector<PredicateResult> failures(const OpDefinition& definition, bool fused, const OpCall& call);
// "x must be [B, T, D], got [2, 3] (predicate modulate_shapes); ..."
std::string explain(const std::vector<PredicateResult>& failed);

// The first predicate of `predicates` that `call` fails, or nullptr when all pass.
const Predicate* first_failure(const std::vector<Predicate>& predicates, const OpCall& call);
// Raises the ATen error of `failed`'s type (Predicate::error: c10::ValueError, TypeError,
// IndexError or c10::Error) for a call of crossdev::<op><suffix> whose common predicates fail;
// the message lists every failing predicate, as NotEligible's does.
[[noreturn]] void raise_invalid_call(const OpDefinition& definition, const char* suffix, const Predicate& failed,
                                     const OpCall& call);
// The common predicates, raising as raise_invalid_call when one fails.
inline void check_valid_call(const OpDefinition& definition, const char* suffix, const OpCall& call) {
  if (const Predicate* failed = first_failure(definition.checks.common, call)) {
    raise_invalid_call(definition, suffix, *failed, call);
  }
}

// The dispatch key whose kernel serves tensors on `device` (CPU, CUDA, PrivateUse1, Meta, ...).
c10::DispatchKey backend_key(c10::Device device);
// True when crossdev::<op> has a native (fused) kernel of its own for `device`'s backend, rather
// than reaching it through CompositeExplicitAutograd. Meta's shape-only kernel does not count.
// Asks the dispatcher: for the harness and the record, never for a kernel that is running.
bool has_native_kernel(const OpDefinition& definition, c10::Device device);

}  // namespace crossdev::ops::library
