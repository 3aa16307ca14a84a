#pragma once
// scaled_masked_softmax(scores[..., Tk], mask?, scale) = softmax(masked_fill(scores * scale, mask, -inf), -1)
// mask: bool, broadcastable to scores, true = masked out. A row with every key masked is all
// zeros (not NaN), and so is its gradient.
#include "ops/cpu/dispatch.h"
#include "ops/op_definition.h"

namespace crossdev::ops::scaled_masked_softmax {
at::Tensor fallback(const OpCall& call);
// The fused CPU kernels (fused_cpu.cpp, one copy per instruction set), chosen at run time.
struct CpuKernelsTag {
  static constexpr const char* kName = "scaled_masked_softmax";
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
}  // namespace crossdev::ops::scaled_masked_softmax
