#pragma once
// The eligibility predicates of an op, built once per definition: `common` (every implementation:
// inputs present, dtypes, one device, the op's own shape rules) and `fused` (the native kernel of
// the call's backend is registered, its dtype is instantiated, the op's fused-only limits). Each
// predicate explains itself, so "why fused did not run" is a sentence, not a flag.
#include <string>
#include <vector>

#include "ops/op_definition.h"

namespace crossdev::ops::library {

struct OpPredicates {
  std::vector<Predicate> common;
  std::vector<Predicate> fused;
};
const OpPredicates& predicates_of(const OpDefinition& definition);

// Every predicate (common, then fused ones when `fused`), in order. A call missing a required
// input stops after that first predicate.
std::vector<PredicateResult> eligibility(const OpDefinition& definition, bool fused, const OpCall& call);
std::vector<PredicateResult> failures(const OpDefinition& definition, bool fused, const OpCall& call);
// "x must be [B, T, D], got [2, 3] (predicate modulate_shapes); ..."
std::string explain(const std::vector<PredicateResult>& failed);

// The dispatch key whose kernel serves tensors on `device` (CPU, CUDA, PrivateUse1, Meta, ...).
c10::DispatchKey backend_key(c10::Device device);
// True when crossdev::<op> has a native (fused) kernel of its own for `device`'s backend, rather
// than reaching it through CompositeExplicitAutograd. Meta's shape-only kernel does not count.
bool has_native_kernel(const OpDefinition& definition, c10::Device device);

}  // namespace crossdev::ops::library
