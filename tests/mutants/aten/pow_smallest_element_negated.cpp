// Test-only ATen mutant: aten::pow.Tensor_Tensor_out and aten::pow.Tensor_Scalar_out (what pow's functional and
// in-place forms reach on the sim device (PrivateUse1): they are structured) return the CPU's result with the
// sign of one element flipped, the nonzero element of smallest magnitude (when the output has 2 elements or
// more): a one-element bug, far below the largest rounding error elsewhere in the sample, so a float64 rule that
// compared whole-sample maxima passed it. The suite must fail pow's forward and backward (pow_backward calls pow)
// by "the float64 rule, element by element" (python/crossdev/float64_rule.py; catalog.json).
#include <limits>

#include <ATen/ATen.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

namespace {

// `result` is contiguous: negate its nonzero element of smallest magnitude (NaNs are no candidates).
void negate_smallest_nonzero(const at::Tensor& result) {
  if (result.numel() < 2 || result.scalar_type() == at::kBool) return;
  const at::Tensor magnitude = result.abs().to(at::kDouble).reshape({-1});
  const at::Tensor candidate = magnitude.ne(0).logical_and(magnitude.isnan().logical_not());
  if (!candidate.any().item<bool>()) return;
  const at::Tensor ranked = at::where(candidate, magnitude, std::numeric_limits<double>::infinity());
  const int64_t at_index = ranked.argmin().item<int64_t>();
  result.view({-1}).narrow(0, at_index, 1).neg_();
}

at::Tensor& write_out(const at::Tensor& result, at::Tensor& out) {
  negate_smallest_nonzero(result);
  at::native::resize_output(out, result.sizes());
  out.copy_(result);
  return out;
}

at::Tensor& pow_tensor_tensor_out(const at::Tensor& self, const at::Tensor& exponent, at::Tensor& out) {
  return write_out(at::pow(self.cpu(), exponent.cpu()).contiguous(), out);
}

at::Tensor& pow_tensor_scalar_out(const at::Tensor& self, const at::Scalar& exponent, at::Tensor& out) {
  return write_out(at::pow(self.cpu(), exponent).contiguous(), out);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("pow.Tensor_Tensor_out", pow_tensor_tensor_out);
  m.impl("pow.Tensor_Scalar_out", pow_tensor_scalar_out);
}
