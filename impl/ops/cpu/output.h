#pragma once
// The output tensor of a fused CPU kernel: the `.out` overload's output when the dispatcher
// handed one over (OpCall::out: checked and contiguous, forward_kernels.cpp), so the kernel
// writes straight into it, as ATen's out= kernels do; else a new contiguous tensor.
#include <ATen/ops/empty.h>

#include "ops/op_spec.h"

namespace crossdev::ops::cpu {
inline namespace CPU_CAPABILITY {  // compiled once per instruction set

inline at::Tensor output_for(const OpCall& call, at::IntArrayRef sizes, const at::TensorOptions& options) {
  const at::Tensor& out = call.out;
  if (out.defined() && out.sizes() == sizes && out.scalar_type() == options.dtype().toScalarType() &&
      out.device() == options.device() && out.is_contiguous()) {
    return out;
  }
  return at::empty(sizes, options.memory_format(at::MemoryFormat::Contiguous));
}

}  // namespace CPU_CAPABILITY
}  // namespace crossdev::ops::cpu
