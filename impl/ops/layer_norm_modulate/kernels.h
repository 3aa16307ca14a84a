#pragma once
// layer_norm_modulate(x[B,T,D], shift[B|1,D], scale[B|1,D], eps) (adaLN)
//   = (x - mean) / sqrt(var + eps) * (1 + scale[:,None,:]) + shift[:,None,:]
// mean and the biased variance over D; no affine parameters of its own.
#include "ops/op_definition.h"

namespace crossdev::ops::layer_norm_modulate {
at::Tensor fallback(const OpCall& call);
at::Tensor fused_cpu(const OpCall& call);
}  // namespace crossdev::ops::layer_norm_modulate
