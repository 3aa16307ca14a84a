// Test-only ATen mutant: aten::uniform_ on the sim device (PrivateUse1) draws from U(from + d, to + d) with
// d = 0.1 * (to - from): a device's uniform generator off by a tenth of its range. Its values are a random op's;
// the suite must fail it by "random ops by their law" (random_laws.py: values above `to` are outside the
// law's support, and the goodness of fit against U(from, to) rejects; catalog.json).
// Drawn on the CPU with the default CPU generator, then copied to the device.
#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

constexpr double kShift = 0.1;

at::Tensor& uniform_shifted(at::Tensor& self, double from, double to, c10::optional<at::Generator> /*generator*/) {
  const double shift = kShift * (to - from);
  self.copy_(at::empty(self.sizes(), self.options().device(at::kCPU)).uniform_(from + shift, to + shift));
  return self;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("uniform_", uniform_shifted); }
