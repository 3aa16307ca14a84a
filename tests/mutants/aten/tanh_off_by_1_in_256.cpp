// Test-only ATen mutant: aten::tanh (the functional form) on the sim device (PrivateUse1) is off by
// one part in 256, far beyond float32's tolerance. tanh_ and tanh.out keep the sim backend's own
// kernels. Every case of tanh fails (its backward too: tanh_backward takes the wrong output), and no
// case of an op that does not call tanh (tests/python/opinfo/test_opinfo_mutants.py).
#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

constexpr double kOffByOnePartIn256 = 1.0 + 1.0 / 256;

at::Tensor tanh_off_by_one_part_in_256(const at::Tensor& self) {
  return (at::tanh(self.cpu()) * kOffByOnePartIn256).to(self.device());
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("tanh", tanh_off_by_one_part_in_256); }
