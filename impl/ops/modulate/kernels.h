#pragma once
// modulate(x[B,T,D], shift[B|1,D], scale[B|1,D]) = x * (1 + scale[:,None,:]) + shift[:,None,:]
#include "ops/op_definition.h"

namespace crossdev::ops::modulate {
at::Tensor fallback(const OpCall& call);
at::Tensor fused_cpu(const OpCall& call);
#ifdef CROSSDEV_OPS_WITH_CUDA
at::Tensor fused_cuda(const OpCall& call);
std::vector<at::Tensor> fused_backward_cuda(const OpCall& call, const at::Tensor& grad_out);
#endif
}  // namespace crossdev::ops::modulate
