#pragma once
// The output tensor of a fused kernel (CPU or CUDA): the `.out` overload's output when the
// dispatcher handed one over (OpCall::out: checked, resized and contiguous, forward_kernels.cpp),
// so the kernel writes straight into it, as ATen's out= kernels do; else a new contiguous tensor.
// A kernel that allocated its own result would leave native_forward_out a full extra copy into
// `out` (a second pass over the output's memory, which doubled the .out time on a GPU).
// Defined once (output.cpp), for the CUDA kernels. The CPU kernels' cpu::output_for (ops/cpu/output.h)
// applies the same rule, compiled into each capability's copy; it can become a using-declaration of
// this one (a rebuild of every fused_cpu.cpp copy).
#include <ATen/core/Tensor.h>

#include "ops/op_spec.h"

namespace crossdev::ops {

// call.out when it has exactly `sizes`, `options`' dtype and device and is contiguous; else
// at::empty(sizes, options) in the contiguous memory format.
at::Tensor output_for(const OpCall& call, at::IntArrayRef sizes, const at::TensorOptions& options);

}  // namespace crossdev::ops
