// Test-only: aten::tan on the sim device (PrivateUse1) dies with SIGSEGV, as a segfaulting kernel
// of a backend under test would. Every other op keeps the sim backend's own kernels, so an opinfo
// row over tan and tanh (glob "tan*") shows one `crash` case and the rest of the row still run.
#include <csignal>
#include <cstdlib>

#include <torch/library.h>

namespace {

at::Tensor segfaulting_tan(const at::Tensor&) {
  std::raise(SIGSEGV);
  std::abort();  // not reached
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("tan", segfaulting_tan); }
