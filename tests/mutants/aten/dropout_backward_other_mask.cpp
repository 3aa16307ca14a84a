// Test-only ATen mutant: aten::native_dropout_backward on the sim device (PrivateUse1) scales grad_output by the
// mask rolled by one element along the flattened tensor (torch.roll(mask, 1)) instead of the forward's mask: a
// device whose backward reads another mask than the one its forward drew (a stale buffer, an offset
// off by one). Its forward is right, and the drawn mask is a random op's, so its gradient cannot be compared
// with the CPU's; the suite must fail dropout's backward by "a random op's backward against its own forward
// draw" (random_backward.py: grad_x = grad_y * y / x from the device's own forward; catalog.json).
#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

at::Tensor dropout_backward_rolled_mask(const at::Tensor& grad_output, const at::Tensor& mask, double scale) {
  const at::Tensor rolled = at::roll(mask.cpu(), {1});  // no dims: rolls the flattened tensor, keeps the shape
  return at::native_dropout_backward(grad_output.cpu(), rolled, scale).to(grad_output.device());
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("native_dropout_backward", dropout_backward_rolled_mask); }
