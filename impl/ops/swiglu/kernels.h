#pragma once
// swiglu(gate, up) = silu(gate) * up = gate * sigmoid(gate) * up; gate and up broadcast.
#include "ops/op_definition.h"

namespace crossdev::ops::swiglu {
at::Tensor fallback(const OpCall& call);
at::Tensor fused_cpu(const OpCall& call);
#ifdef CROSSDEV_OPS_WITH_CUDA
at::Tensor fused_cuda(const OpCall& call);
std::vector<at::Tensor> fused_backward_cuda(const OpCall& call, const at::Tensor& grad_out);
#endif
}  // namespace crossdev::ops::swiglu
