// Test-only ATen mutant: aten::bernoulli_.Tensor and aten::bernoulli (the functional, p as self) on the sim device
// (PrivateUse1) draw every element with probability 0.5, whatever the p tensor says: a device kernel that reads
// one scalar probability instead of the per-element tensor. torch.bernoulli(p) reaches one or the other on sim;
// both carry the bug. Its values are a random op's; the suite must fail it by "random ops by their law
// (per-element parameter)" (random_laws.py: the goodness of fit against p[i] at element i; catalog.json).
// bernoulli_.float keeps the sim backend's own kernel. Drawn on the CPU with the default CPU generator, then
// copied to the device.
#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

constexpr double kIgnoredP = 0.5;

at::Tensor& bernoulli_tensor_half(at::Tensor& self, const at::Tensor& /*p*/,
                                  c10::optional<at::Generator> /*generator*/) {
  self.copy_(at::empty(self.sizes(), self.options().device(at::kCPU)).bernoulli_(kIgnoredP));
  return self;
}

at::Tensor bernoulli_half(const at::Tensor& self, c10::optional<at::Generator> /*generator*/) {
  return at::empty(self.sizes(), self.options().device(at::kCPU)).bernoulli_(kIgnoredP).to(self.device());
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("bernoulli_.Tensor", bernoulli_tensor_half);
  m.impl("bernoulli", bernoulli_half);
}
