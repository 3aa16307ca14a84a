#pragma once
// rotary(x[B,T,H,Dh], cos[T|1,Dh], sin[T|1,Dh]), LLaMA's half rotation (Dh even, h = Dh/2):
//   rotate_half(x) = cat(-x[..., h:], x[..., :h])
//   out = x * cos[None,:,None,:] + rotate_half(x) * sin[None,:,None,:]
#include "ops/cpu/dispatch.h"
#include "ops/op_definition.h"

namespace crossdev::ops::rotary {
// Backward: grad_x = grad * cos + rotate_half^T(grad * sin) (the fused kernels);
//   grad_cos = sum over B, H of grad * x,  grad_sin = sum over B, H of grad * rotate_half(x),
//   also over T when the table is one row broadcast over T (table_gradients, ATen ops).
CROSSDEV_DECLARE_OP_KERNELS(rotary)

// {grad_cos, grad_sin} of `call` for `grad_out`, shaped and typed like cos and sin: ATen ops in the
// opmath dtype, on any device (fallback.cpp). The fused backwards (CPU and CUDA) return these
// beside their own grad_x.
std::vector<at::Tensor> table_gradients(const ::crossdev::ops::OpCall& call, const at::Tensor& grad_out);
}  // namespace crossdev::ops::rotary
