// Test-only ATen mutant: aten::normal_ on the sim device (PrivateUse1) draws from N(mean, 1.15 * std): a device's
// normal generator with the wrong spread, its mean right. Its values are a random op's; the suite must fail it
// by "random ops by their law" (random_laws.py: the goodness of fit against N(mean, std) rejects; catalog.json).
// Drawn on the CPU with the default CPU generator, then copied to the device.
#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

constexpr double kStdFactor = 1.15;

at::Tensor& normal_wider(at::Tensor& self, double mean, double std, c10::optional<at::Generator> /*generator*/) {
  self.copy_(at::empty(self.sizes(), self.options().device(at::kCPU)).normal_(mean, kStdFactor * std));
  return self;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("normal_", normal_wider); }
