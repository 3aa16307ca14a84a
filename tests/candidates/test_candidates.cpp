// crossdev_test::*: candidate operators for the tests of ops-matrix candidate rows
// (tests/fixtures/candidate_matrices, tests/gtest/parity/test_candidate_rows.cpp).
// Registered exactly as a user's extension would: TORCH_LIBRARY with composite kernels (autograd
// for free), one op with only a CPU kernel (no autograd), and schemas that do not fit
// crossdev::modulate's inputs (x, shift, scale) -> Tensor, which validation must reject.
#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

// In float (double stays double), rounded once to the input's dtype, as a careful kernel would.
at::Tensor opmath(const at::Tensor& t) { return t.scalar_type() == at::kDouble ? t : t.to(at::kFloat); }

at::Tensor modulate(const at::Tensor& x, const at::Tensor& shift, const at::Tensor& scale) {
  return (opmath(x) * (1 + opmath(scale).unsqueeze(1)) + opmath(shift).unsqueeze(1)).to(x.scalar_type());
}

// Right, with its own argument names: candidates are matched by position.
at::Tensor modulate_good(const at::Tensor& input, const at::Tensor& shift, const at::Tensor& scale) {
  return modulate(input, shift, scale);
}

// Right; the extra argument has a default, so the call fits.
at::Tensor modulate_extra_arg(const at::Tensor& x, const at::Tensor& shift, const at::Tensor& scale, double alpha) {
  return (opmath(x) * (alpha + opmath(scale).unsqueeze(1)) + opmath(shift).unsqueeze(1)).to(x.scalar_type());
}

// Wrong: subtracts the shift.
at::Tensor modulate_wrong(const at::Tensor& x, const at::Tensor& shift, const at::Tensor& scale) {
  return (opmath(x) * (1 + opmath(scale).unsqueeze(1)) - opmath(shift).unsqueeze(1)).to(x.scalar_type());
}

// Right forward, registered for CPU only: no autograd kernel.
at::Tensor modulate_no_autograd(const at::Tensor& x, const at::Tensor& shift, const at::Tensor& scale) {
  at::AutoDispatchBelowADInplaceOrView guard;
  return modulate(x, shift, scale);
}

// Right; eps comes from the call (crossdev's rms_norm passes it as a float).
at::Tensor rms_norm_good(const at::Tensor& x, const at::Tensor& weight, double eps) {
  const at::Tensor v = opmath(x);
  return (v * (v * v).mean(-1, /*keepdim=*/true).add(eps).rsqrt() * opmath(weight)).to(x.scalar_type());
}

}  // namespace

TORCH_LIBRARY(crossdev_test, m) {
  m.def("modulate_good(Tensor input, Tensor shift, Tensor scale) -> Tensor", &modulate_good);
  m.def("modulate_extra_arg(Tensor x, Tensor shift, Tensor scale, float alpha=1.0) -> Tensor", &modulate_extra_arg);
  m.def("modulate_wrong(Tensor x, Tensor shift, Tensor scale) -> Tensor", &modulate_wrong);
  m.def("modulate_no_autograd(Tensor x, Tensor shift, Tensor scale) -> Tensor");
  m.def("rms_norm_good(Tensor x, Tensor weight, float eps=1e-06) -> Tensor", &rms_norm_good);
  // Schemas only: validation rejects them before anything is called.
  m.def("modulate_two_args(Tensor x, Tensor shift) -> Tensor");
  m.def("modulate_float_scale(Tensor x, Tensor shift, float scale) -> Tensor");
  m.def("modulate_pair(Tensor x, Tensor shift, Tensor scale) -> (Tensor, Tensor)");
  m.def("modulate_inplace(Tensor(a!) x, Tensor shift, Tensor scale) -> Tensor(a!)");
  m.def("modulate_needs_alpha(Tensor x, Tensor shift, Tensor scale, float alpha) -> Tensor");
}

TORCH_LIBRARY_IMPL(crossdev_test, CPU, m) { m.impl("modulate_no_autograd", &modulate_no_autograd); }
