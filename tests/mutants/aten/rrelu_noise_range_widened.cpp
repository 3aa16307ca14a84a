// Test-only ATen mutant: aten::rrelu_with_noise on the sim device (PrivateUse1) in training draws the slope of
// each non-positive input from U(lower, upper + 0.1 * (upper - lower)) instead of U(lower, upper): a device
// whose rrelu samples its slopes from a range 10% wider. It writes `noise` in place as ATen does (the slope
// where x <= 0, 1 elsewhere) and returns x * noise. Its values are a random op's; the suite must fail it by
// "random ops by their law (rrelu's slopes)" (random_laws.py: slopes above `upper` are outside the law's
// support; catalog.json). Eval mode is ATen's: leaky_relu with slope (lower + upper) / 2, noise untouched.
// Drawn on the CPU with the default CPU generator, then copied to the device.
#include <ATen/ATen.h>
#include <torch/library.h>
#include <torch/version.h>

namespace {

constexpr double kWiden = 0.1;

// torch 2.6 marked noise as mutated in the schema (Tensor(b!) noise), which made its C++ type a non-const
// reference; the kernel's signature must match the installed torch's.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 6)
using NoiseRef = at::Tensor&;
#else
using NoiseRef = const at::Tensor&;
#endif

at::Tensor rrelu_wider_slopes(const at::Tensor& self, NoiseRef noise, const at::Scalar& lower,
                              const at::Scalar& upper, bool training, c10::optional<at::Generator> /*generator*/) {
  const double lo = lower.toDouble();
  const double hi = upper.toDouble();
  const at::Tensor x = self.cpu();
  if (!training) return at::leaky_relu(x, (lo + hi) / 2).to(self.device());
  const at::Tensor slopes = at::empty(x.sizes(), x.options()).uniform_(lo, hi + kWiden * (hi - lo));
  const at::Tensor noise_cpu = at::where(x.le(0), slopes, at::ones_like(x));  // ATen: a slope where x <= 0
  noise.copy_(noise_cpu);
  return x.mul(noise_cpu).to(self.device());
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("rrelu_with_noise", rrelu_wider_slopes); }
