// Test-only ATen mutant: aten::fractional_max_pool2d_backward on the sim device (PrivateUse1) scatters each
// gradient to the next flat index of its plane (indices + 1, clamped to the last one, H*W - 1) instead of the
// index the forward chose: a device backward that misreads its indices. The forward (its windows drawn at
// random) is right, so the gradient cannot be compared with the CPU's; the suite must fail the backward by "a
// random op's backward against its own forward draw" (random_backward.py: Euler's identity
// sum(grad_x * x) = sum(grad_y * y) breaks; catalog.json). The functional is structured: on sim it reaches
// the .grad_input overload (CompositeExplicitAutogradNonFunctional); both carry the bug.
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

namespace {

at::Tensor backward_to_next_index(const at::Tensor& grad_output, const at::Tensor& self, at::IntArrayRef kernel_size,
                                  at::IntArrayRef output_size, const at::Tensor& indices) {
  const int64_t last = self.size(-2) * self.size(-1) - 1;  // flat indices into each H x W plane
  const at::Tensor shifted = (indices.cpu() + 1).clamp_max(last);
  return at::fractional_max_pool2d_backward(grad_output.cpu(), self.cpu(), kernel_size, output_size, shifted);
}

at::Tensor fractional_max_pool2d_backward_wrong_index(const at::Tensor& grad_output, const at::Tensor& self,
                                                      at::IntArrayRef kernel_size, at::IntArrayRef output_size,
                                                      const at::Tensor& indices) {
  return backward_to_next_index(grad_output, self, kernel_size, output_size, indices).to(self.device());
}

at::Tensor& fractional_max_pool2d_backward_wrong_index_out(const at::Tensor& grad_output, const at::Tensor& self,
                                                           at::IntArrayRef kernel_size, at::IntArrayRef output_size,
                                                           const at::Tensor& indices, at::Tensor& grad_input) {
  const at::Tensor result = backward_to_next_index(grad_output, self, kernel_size, output_size, indices);
  at::native::resize_output(grad_input, result.sizes());
  grad_input.copy_(result);
  return grad_input;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("fractional_max_pool2d_backward", fractional_max_pool2d_backward_wrong_index);
  m.impl("fractional_max_pool2d_backward.grad_input", fractional_max_pool2d_backward_wrong_index_out);
}
