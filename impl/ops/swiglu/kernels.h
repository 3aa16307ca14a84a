#pragma once
// swiglu(gate, up) = silu(gate) * up = gate * sigmoid(gate) * up; gate and up broadcast.
#include "ops/cpu/dispatch.h"
#include "ops/op_definition.h"

namespace crossdev::ops::swiglu {
CROSSDEV_DECLARE_OP_KERNELS(swiglu)
}  // namespace crossdev::ops::swiglu
