#pragma once
// modulate(x[B,T,D], shift[B|1,D], scale[B|1,D]) = x * (1 + scale[:,None,:]) + shift[:,None,:]
#include "ops/cpu/dispatch.h"
#include "ops/op_definition.h"

namespace crossdev::ops::modulate {
CROSSDEV_DECLARE_OP_KERNELS(modulate)
}  // namespace crossdev::ops::modulate
