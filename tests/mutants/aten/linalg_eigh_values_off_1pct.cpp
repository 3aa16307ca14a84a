// Test-only ATen mutant: aten::_linalg_eigh on the sim device (PrivateUse1) returns eigenvalues 1% too
// large (and the CPU's eigenvectors). No rule may pass it: not output_process_fn_grad (it leaves the
// eigenvalues as they are), not the float64 rule (1% is orders of magnitude beyond float32's rounding)
// (tests/python/opinfo/test_opinfo_device_rules.py; linalg_eigh_flip_signs is its valid twin).
#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

std::tuple<at::Tensor, at::Tensor> eigh_values_off(const at::Tensor& self, c10::string_view uplo, bool compute_v) {
  auto [values, vectors] = at::_linalg_eigh(self.cpu(), uplo, compute_v);
  return {(values * 1.01).to(self.device()), vectors.to(self.device())};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("_linalg_eigh", eigh_values_off); }
