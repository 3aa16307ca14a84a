#pragma once
// Makes a fused forward kernel autograd-aware: a torch::autograd::Function whose backward is the
// op's fused backward when it has one, otherwise derived from the fallback (the fallback graph is
// rebuilt on the saved inputs and differentiated with torch::autograd::grad).
#include <ATen/core/Tensor.h>

#include "ops/op_definition.h"

namespace crossdev::ops {

at::Tensor apply_fused(const OpDefinition& definition, KernelFn forward, const OpCall& call);

// Gradients of the fallback at `call` for every differentiable input (OpDefinition::inputs order).
std::vector<at::Tensor> fallback_derived_backward(const OpDefinition& definition, const OpCall& call,
                                                  const at::Tensor& grad_out);

}  // namespace crossdev::ops
