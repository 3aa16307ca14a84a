#pragma once
// swiglu(gate, up) = silu(gate) * up = gate * sigmoid(gate) * up; gate and up broadcast.
#include "ops/cpu/dispatch.h"
#include "ops/op_definition.h"

namespace crossdev::ops::swiglu {
at::Tensor fallback(const OpCall& call);
// The fused CPU kernels (fused_cpu.cpp, one copy per instruction set), chosen at run time.
struct CpuKernelsTag {
  static constexpr const char* kName = "swiglu";
};
using CpuKernels = cpu::CpuDispatch<CpuKernelsTag>;
inline at::Tensor fused_cpu(const OpCall& call) { return CpuKernels::forward(call); }
inline std::vector<at::Tensor> fused_backward_cpu(const OpCall& call, const at::Tensor& grad_out) {
  return CpuKernels::backward(call, grad_out);
}
#ifdef CROSSDEV_OPS_WITH_CUDA
at::Tensor fused_cuda(const OpCall& call);
std::vector<at::Tensor> fused_backward_cuda(const OpCall& call, const at::Tensor& grad_out);
#endif
}  // namespace crossdev::ops::swiglu
