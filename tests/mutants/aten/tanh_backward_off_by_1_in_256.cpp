// Test-only ATen mutant: aten::tanh_backward on the sim device (PrivateUse1) is off by one part in
// 256, while the forward (aten::tanh) stays the sim backend's own: only tanh's backward check fails
// (tests/python/opinfo/test_opinfo_mutants.py).
#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

constexpr double kOffByOnePartIn256 = 1.0 + 1.0 / 256;

at::Tensor tanh_backward_off_by_one_part_in_256(const at::Tensor& grad_output, const at::Tensor& output) {
  return (at::tanh_backward(grad_output.cpu(), output.cpu()) * kOffByOnePartIn256).to(grad_output.device());
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("tanh_backward", tanh_backward_off_by_one_part_in_256); }
