// Test-only: aten::gelu_backward on the sim device (PrivateUse1) is off by a relative 1e-3; the
// forward (aten::gelu) stays the sim backend's own. Outputs agree with the CPU, gradients do not:
// only the gradient localisation can name it. The exact value comes from the CPU kernel through
// ATen's cpu_fallback, as sim's own delegation does.
#include <string>

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/CPUFallback.h>
#include <c10/util/string_view.h>
#include <torch/library.h>

namespace {

constexpr double kRelativeError = 1e-3;

at::Tensor slightly_wrong_gelu_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                        c10::string_view approximate) {
  static const c10::OperatorHandle op = c10::Dispatcher::singleton().findSchemaOrThrow("aten::gelu_backward", "");
  torch::jit::Stack stack{grad_output, self, std::string(approximate)};
  at::native::cpu_fallback(op, &stack);
  return stack.back().toTensor() * (1.0 + kRelativeError);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("gelu_backward", slightly_wrong_gelu_backward); }
