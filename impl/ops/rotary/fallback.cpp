#include <ATen/ExpandUtils.h>
#include <ATen/Functions.h>

#include <vector>

#include "ops/fallback_util.h"
#include "ops/rotary/kernels.h"

namespace crossdev::ops::rotary {
namespace {

at::Tensor rotate_half(const at::Tensor& v) {
  const std::int64_t half = v.size(-1) / 2;
  return at::cat({-v.narrow(-1, half, half), v.narrow(-1, 0, half)}, -1);
}

// product [B, T, H, Dh] summed to the table's [T or 1, Dh], in the table's dtype.
at::Tensor reduce_to_table(const at::Tensor& product, const at::Tensor& table) {
  return at::sum_to(product.sum(at::IntArrayRef{0, 2}), table.sizes()).to(table.scalar_type());
}

}  // namespace

at::Tensor fallback(const OpCall& call) {
  const at::Tensor x = call.tensor("x");
  const at::Tensor v = to_opmath(x);
  const at::Tensor rotated = rotate_half(v);
  const at::Tensor cos = to_opmath(call.tensor("cos")).unsqueeze(1);  // [T|1, 1, Dh]
  const at::Tensor sin = to_opmath(call.tensor("sin")).unsqueeze(1);
  return (v * cos + rotated * sin).to(x.scalar_type());
}

std::vector<at::Tensor> table_gradients(const OpCall& call, const at::Tensor& grad_out) {
  const at::Tensor v = to_opmath(call.tensor("x"));
  const at::Tensor g = to_opmath(grad_out);
  return {reduce_to_table(g * v, call.tensor("cos")), reduce_to_table(g * rotate_half(v), call.tensor("sin"))};
}

}  // namespace crossdev::ops::rotary
