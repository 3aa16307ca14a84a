// Test-only ATen mutant: aten::sum.IntList_out on the sim device (PrivateUse1) returns the CPU's sum times
// (1 + 1e-4): a reduction off by a relative 1e-4 (a dropped or doubled partial sum, a wrong scale), beyond
// float32's tolerance (rtol 1.3e-6) and beyond 4x the CPU's own distance from float64. sum.dim_IntList and
// sum (full reduction) are structured/composite and reach sim as this out overload. The suite must fail sum's
// forward by "the float64 rule, element by element" (python/crossdev/float64_rule.py; catalog.json); float16
// and bfloat16 cases may pass, 1e-4 being within their tolerance.
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

namespace {

constexpr double kOffBy = 1.0 + 1e-4;

at::Tensor& sum_off(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    c10::optional<at::ScalarType> dtype, at::Tensor& out) {
  const at::Tensor result = at::sum(self.cpu(), dim, keepdim, dtype).mul(kOffBy);
  at::native::resize_output(out, result.sizes());
  out.copy_(result);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("sum.IntList_out", sum_off); }
