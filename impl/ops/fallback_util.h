#pragma once
// Shared by the fallbacks: they compute in the opmath dtype (float for float16/bfloat16) and
// round once at the end, the contract every implementation of an op is held to (docs/ops.md).
#include <ATen/OpMathType.h>
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>

namespace crossdev::ops {

inline at::Tensor to_opmath(const at::Tensor& t) {
  return t.defined() ? t.to(at::toOpMathType(t.scalar_type())) : t;
}

}  // namespace crossdev::ops
