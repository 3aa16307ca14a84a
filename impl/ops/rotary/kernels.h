#pragma once
// rotary(x[B,T,H,Dh], cos[T|1,Dh], sin[T|1,Dh]), LLaMA's half rotation (Dh even, h = Dh/2):
//   rotate_half(x) = cat(-x[..., h:], x[..., :h])
//   out = x * cos[None,:,None,:] + rotate_half(x) * sin[None,:,None,:]
#include "ops/cpu/dispatch.h"
#include "ops/op_definition.h"

namespace crossdev::ops::rotary {
// Backward: grad_x = grad * cos + rotate_half^T(grad * sin); cos/sin are tables, not differentiated.
CROSSDEV_DECLARE_OP_KERNELS(rotary)
}  // namespace crossdev::ops::rotary
