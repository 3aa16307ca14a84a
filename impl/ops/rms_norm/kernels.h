#pragma once
// rms_norm(x[..., D], weight[D], eps) = x * rsqrt(mean(x^2, -1) + eps) * weight
#include "ops/cpu/dispatch.h"
#include "ops/op_definition.h"

namespace crossdev::ops::rms_norm {
CROSSDEV_DECLARE_OP_KERNELS(rms_norm)
}  // namespace crossdev::ops::rms_norm
