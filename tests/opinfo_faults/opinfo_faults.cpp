// Test-only ATen kernels for the sim device (PrivateUse1), loaded with `--load-library` by
// tests/python/opinfo/test_opinfo_suite.py; every other op keeps the sim backend's own kernels:
//   - aten::tan dies with SIGSEGV, as a segfaulting kernel of a backend under test would: an
//     opinfo row over tan and tanh (glob "tan*") shows one `crash` case and the rest still run;
//   - aten::tanh_ (in-place) is off by one part in 256, while the functional aten::tanh and
//     aten::tanh.out stay right: only the `inplace` variant cases of tanh fail. (Observed: a wrong
//     tanh.out broke the functional tanh on sim too, so the out= form is not faulted here.)
#include <csignal>
#include <cstdlib>

#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

constexpr double kOffByOnePartIn256 = 1.0 + 1.0 / 256;

at::Tensor segfaulting_tan(const at::Tensor&) {
  std::raise(SIGSEGV);
  std::abort();  // not reached
}

at::Tensor& wrong_tanh_(at::Tensor& self) {
  self.copy_(at::tanh(self.cpu()) * kOffByOnePartIn256);
  return self;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("tan", segfaulting_tan);
  m.impl("tanh_", wrong_tanh_);
}
