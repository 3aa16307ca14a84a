#pragma once
// rotary(x[B,T,H,Dh], cos[T|1,Dh], sin[T|1,Dh]), LLaMA's half rotation (Dh even, h = Dh/2):
//   rotate_half(x) = cat(-x[..., h:], x[..., :h])
//   out = x * cos[None,:,None,:] + rotate_half(x) * sin[None,:,None,:]
#include "ops/cpu/dispatch.h"
#include "ops/op_definition.h"

namespace crossdev::ops::rotary {
at::Tensor fallback(const OpCall& call);
// The fused CPU kernels (fused_cpu.cpp, one copy per instruction set), chosen at run time.
struct CpuKernelsTag {
  static constexpr const char* kName = "rotary";
};
using CpuKernels = cpu::CpuDispatch<CpuKernelsTag>;
inline at::Tensor fused_cpu(const OpCall& call) { return CpuKernels::forward(call); }
// grad_x = grad * cos + rotate_half^T(grad * sin); cos/sin are tables, not differentiated.
inline std::vector<at::Tensor> fused_backward_cpu(const OpCall& call, const at::Tensor& grad_out) {
  return CpuKernels::backward(call, grad_out);
}
#ifdef CROSSDEV_OPS_WITH_CUDA
at::Tensor fused_cuda(const OpCall& call);
std::vector<at::Tensor> fused_backward_cuda(const OpCall& call, const at::Tensor& grad_out);
#endif
}  // namespace crossdev::ops::rotary
