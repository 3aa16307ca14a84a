#pragma once
// scaled_masked_softmax(scores[..., Tk], mask?, scale) = softmax(masked_fill(scores * scale, mask, -inf), -1)
// mask: bool, broadcastable to scores, true = masked out. A row with every key masked is all
// zeros (not NaN), and so is its gradient.
#include "ops/op_definition.h"

namespace crossdev::ops::scaled_masked_softmax {
at::Tensor fallback(const OpCall& call);
at::Tensor fused_cpu(const OpCall& call);
#ifdef CROSSDEV_OPS_WITH_CUDA
at::Tensor fused_cuda(const OpCall& call);
std::vector<at::Tensor> fused_backward_cuda(const OpCall& call, const at::Tensor& grad_out);
#endif
}  // namespace crossdev::ops::scaled_masked_softmax
