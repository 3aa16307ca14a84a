// Test-only ATen mutant: aten::sinh (the functional form) on the sim device (PrivateUse1) returns
// the CPU's result moved by one ULP, element by element (nextafter towards +inf). Every case still
// passes: one ULP is within every dtype's tolerance, the floor docs/opinfo.md documents
// (tests/python/opinfo/test_opinfo_mutants.py).
#include <limits>

#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

at::Tensor sinh_one_ulp_up(const at::Tensor& self) {
  const at::Tensor exact = at::sinh(self.cpu());
  return at::nextafter(exact, at::full_like(exact, std::numeric_limits<double>::infinity())).to(self.device());
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("sinh", sinh_one_ulp_up); }
