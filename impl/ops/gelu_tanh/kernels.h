#pragma once
// gelu_tanh(x) = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), any shape.
#include "ops/cpu/dispatch.h"
#include "ops/op_definition.h"

namespace crossdev::ops::gelu_tanh {
constexpr double kBeta = 0.7978845608028654;  // sqrt(2 / pi)
constexpr double kKappa = 0.044715;
CROSSDEV_DECLARE_OP_KERNELS(gelu_tanh)
}  // namespace crossdev::ops::gelu_tanh
