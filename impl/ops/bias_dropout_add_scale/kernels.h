#pragma once
// bias_dropout_add_scale(x, bias?, scale, residual?, p, training)
//   = scale * dropout(x + bias, p, training) + residual
// scale: tensor input "scale" or scalar "scale_value"; p: scalar "p" (default 0). The dropout mask is
// the portable one (portable_random.h), indexed row-major over the shape of x + bias.
#include "ops/cpu/dispatch.h"
#include "ops/op_definition.h"

namespace crossdev::ops::bias_dropout_add_scale {
at::Tensor fallback(const OpCall& call);
// The fused CPU kernels (fused_cpu.cpp, one copy per instruction set), chosen at run time.
struct CpuKernelsTag {
  static constexpr const char* kName = "bias_dropout_add_scale";
};
using CpuKernels = cpu::CpuDispatch<CpuKernelsTag>;
inline at::Tensor fused_cpu(const OpCall& call) { return CpuKernels::forward(call); }
inline std::vector<at::Tensor> fused_backward_cpu(const OpCall& call, const at::Tensor& grad_out) {
  return CpuKernels::backward(call, grad_out);
}
inline bool dropout_active(const OpCall& call) { return call.training && call.scalar("p", 0.0) > 0.0; }
#ifdef CROSSDEV_OPS_WITH_CUDA
at::Tensor fused_cuda(const OpCall& call);
std::vector<at::Tensor> fused_backward_cuda(const OpCall& call, const at::Tensor& grad_out);
#endif
}  // namespace crossdev::ops::bias_dropout_add_scale
