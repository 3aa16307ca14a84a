#pragma once
// layer_norm_modulate(x[B,T,D], shift[B|1,D], scale[B|1,D], eps) (adaLN)
//   = (x - mean) / sqrt(var + eps) * (1 + scale[:,None,:]) + shift[:,None,:]
// mean and the biased variance over D; no affine parameters of its own.
#include "ops/cpu/dispatch.h"
#include "ops/op_definition.h"

namespace crossdev::ops::layer_norm_modulate {
CROSSDEV_DECLARE_OP_KERNELS(layer_norm_modulate)
}  // namespace crossdev::ops::layer_norm_modulate
