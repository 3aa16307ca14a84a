#pragma once
// bias_dropout_add_scale(x, bias?, scale, residual?, p, training)
//   = scale * dropout(x + bias, p, training) + residual
// scale: tensor input "scale" or scalar "scale_value"; p: scalar "p" (default 0). The dropout mask is
// the portable one (portable_random.h), indexed row-major over the shape of x + bias, for the
// stream (seed, offset) the call draws from its generator (generator_stream.h).
#include "ops/cpu/dispatch.h"
#include "ops/generator_stream.h"
#include "ops/op_definition.h"

namespace crossdev::ops::bias_dropout_add_scale {
CROSSDEV_DECLARE_OP_KERNELS(bias_dropout_add_scale)
// static: each per-capability copy of fused_cpu.cpp keeps its own (ops/cpu/dispatch.h).
static inline bool dropout_active(const OpCall& call) { return call.training && call.scalar("p", 0.0) > 0.0; }
// The stream of this call's mask: drawn from the call's generator (or the default one of x's
// device) when dropout is active, advancing it by the number of elements of x + bias; {0, 0}
// and the generator untouched otherwise. Every kernel (fused CPU, CUDA, composite) calls it once
// per forward or backward; autograd gives the backward a copy of the forward's generator state.
generator_stream::Stream draw_mask_stream(const OpCall& call);
}  // namespace crossdev::ops::bias_dropout_add_scale
