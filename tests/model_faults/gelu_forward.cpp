// Test-only: aten::gelu on the sim device (PrivateUse1) is off by a relative 1e-3, a plausible
// bug of a backend's activation kernel (a wrong constant). Its backward (aten::gelu_backward) stays
// the sim backend's own, so only the forward diverges. Every other op keeps sim's kernels. The
// exact value comes from the CPU kernel through ATen's cpu_fallback, as sim's own delegation does.
#include <string>

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/CPUFallback.h>
#include <c10/util/string_view.h>
#include <torch/library.h>

namespace {

constexpr double kRelativeError = 1e-3;

at::Tensor slightly_wrong_gelu(const at::Tensor& self, c10::string_view approximate) {
  static const c10::OperatorHandle op = c10::Dispatcher::singleton().findSchemaOrThrow("aten::gelu", "");
  torch::jit::Stack stack{self, std::string(approximate)};
  at::native::cpu_fallback(op, &stack);
  return stack.back().toTensor() * (1.0 + kRelativeError);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("gelu", slightly_wrong_gelu); }
