#pragma once
// Ops that update arguments their schema does not mark as written. native_batch_norm updates
// running_mean and running_var in training, but its schema reads `Tensor? running_mean` (no `(a!)`), and
// at::native::cpu_fallback writes back only the arguments a schema marks. Delegated to the CPU as they are,
// sim's running statistics never moved: the bug of any backend built on the CPU fallback, which the
// opinfo suite's comparison of updated inputs found (docs/sim-backend.md).
#include <ATen/core/stack.h>
#include <ATen/core/function_schema.h>

namespace crossdev::sim {

// Replaces, on the stack, each such argument that is a sim tensor by a host alias of it (a CPU tensor on
// the same memory: host_alias.h), so that the CPU kernel updates the sim tensor in place, as CUDA's does.
void alias_unannotated_writes(const c10::FunctionSchema& schema, torch::jit::Stack& stack);

}  // namespace crossdev::sim
