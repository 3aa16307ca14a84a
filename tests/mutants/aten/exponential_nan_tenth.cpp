// Test-only ATen mutant: aten::exponential_ on the sim device (PrivateUse1) draws correct Exp(lambd) values,
// then sets about 10% of the elements (each with probability 0.1, chosen at random) to NaN: a device kernel
// that leaves some lanes unwritten or divides by zero now and then. Its values are a random op's; the suite
// must fail it by "random ops by their law (non-finite values counted)" (random_laws.py: NaN is never a value
// of the law; a NaN is counted, never skipped; catalog.json).
// Drawn on the CPU with the default CPU generator, then copied to the device.
#include <limits>

#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

constexpr double kNanFraction = 0.1;

at::Tensor& exponential_with_nans(at::Tensor& self, double lambd, c10::optional<at::Generator> /*generator*/) {
  at::Tensor draw = at::empty(self.sizes(), self.options().device(at::kCPU)).exponential_(lambd);
  const at::Tensor nan_at = at::empty(self.sizes(), at::TensorOptions().dtype(at::kFloat)).bernoulli_(kNanFraction);
  draw.masked_fill_(nan_at.to(at::kBool), std::numeric_limits<double>::quiet_NaN());
  self.copy_(draw);
  return self;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("exponential_", exponential_with_nans); }
