#pragma once
// The seed's `@torch.jit.script` implementation: the op's script text is compiled once per op with
// torch::jit::compile and run through the graph executor. Floating inputs are promoted to the
// opmath dtype (float for float16/bfloat16) before the call and the result rounded back once, so
// it is held to the same reference as the fused kernels. A failure of the "Unknown device for
// graph fuser" class is rethrown as GraphFuserUnavailable naming the device.
#include <ATen/core/Tensor.h>

#include <string_view>

#include "ops/op_definition.h"

namespace crossdev::ops {

at::Tensor run_torchscript(const OpDefinition& definition, const OpCall& call);

// True when an error text belongs to the graph-fuser class (case-insensitive).
bool is_graph_fuser_error(std::string_view message);

}  // namespace crossdev::ops
