// Test-only ATen mutant: aten::bernoulli_.float on the sim device (PrivateUse1) fills with ones: every
// dropout keeps every element (dropout2d's feature_dropout draws its channel mask with it). Its values are
// a random op's (the suite compares them by distribution, not element by element), and the distribution is
// wrong: no zeros where a fraction p should be (tests/python/opinfo/test_opinfo_device_rules.py).
#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

at::Tensor& keep_all(at::Tensor& self, double /*p*/, c10::optional<at::Generator> /*generator*/) {
  return self.fill_(1);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("bernoulli_.float", keep_all); }
