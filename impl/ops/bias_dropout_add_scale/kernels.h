#pragma once
// bias_dropout_add_scale(x, bias?, scale, residual?, p, training)
//   = scale * dropout(x + bias, p, training) + residual
// scale: tensor input "scale" or scalar "scale_value"; p: scalar "p" (default 0). The dropout mask is
// the portable one (portable_random.h), indexed row-major over the shape of x + bias.
#include "ops/cpu/dispatch.h"
#include "ops/op_definition.h"

namespace crossdev::ops::bias_dropout_add_scale {
CROSSDEV_DECLARE_OP_KERNELS(bias_dropout_add_scale)
// static: each per-capability copy of fused_cpu.cpp keeps its own (ops/cpu/dispatch.h).
static inline bool dropout_active(const OpCall& call) { return call.training && call.scalar("p", 0.0) > 0.0; }
}  // namespace crossdev::ops::bias_dropout_add_scale
