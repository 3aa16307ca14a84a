// Test-only ATen mutant, a *valid* one: aten::_linalg_eigh (what linalg.eigh and eigh decompose to) on the sim
// device (PrivateUse1) returns the CPU's eigenvectors with every other column negated. An eigenvector's sign
// is any backend's choice (cuSOLVER's differ from LAPACK's), so the opinfo suite must pass it: op_db's
// output_process_fn_grad compares |V| on both sides and differentiates through it, as test_compare_cpu does
// (tests/python/opinfo/test_opinfo_device_rules.py). Its twin linalg_eigh_values_off_1pct must fail.
#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

std::tuple<at::Tensor, at::Tensor> eigh_other_signs(const at::Tensor& self, c10::string_view uplo, bool compute_v) {
  auto [values, vectors] = at::_linalg_eigh(self.cpu(), uplo, compute_v);
  if (compute_v && vectors.numel() > 0) {
    auto signs = at::ones({vectors.size(-1)}, vectors.options());
    signs.index_put_({at::indexing::Slice(1, at::indexing::None, 2)}, -1);
    vectors = vectors * signs;  // column j of every matrix times (-1)^j
  }
  return {values.to(self.device()), vectors.to(self.device())};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("_linalg_eigh", eigh_other_signs); }
