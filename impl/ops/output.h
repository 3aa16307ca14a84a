#pragma once
// The output tensor of a fused kernel (CPU or CUDA): the `.out` overload's output when the
// dispatcher handed one over (OpCall::out: checked, resized and contiguous, forward_kernels.cpp),
// so the kernel writes straight into it, as ATen's out= kernels do; else a new contiguous tensor.
// A kernel that allocated its own result would leave native_forward_out a full extra copy into
// `out` (a second pass over the output's memory, which doubled the .out time on a GPU).
// Defined once (output.cpp), outside the per-capability copies of the CPU kernels: every copy
// and every CUDA kernel calls this one rule.
#include <ATen/core/Tensor.h>

#include "ops/op_spec.h"

namespace crossdev::ops {

// call.out when it has exactly `sizes`, `options`' dtype and device and is contiguous; else
// a new contiguous tensor (on the CPU at::detail::empty_cpu, as ATen's CPU kernels allocate; else
// at::empty).
at::Tensor output_for(const OpCall& call, at::IntArrayRef sizes, const at::TensorOptions& options);

}  // namespace crossdev::ops
