// Test-only ATen mutant: aten::native_dropout (what dropout on the sim device (PrivateUse1) reaches: at::dropout
// takes the fused path for privateuseone) keeps each element with probability 1-p+0.1 (at most 1) in training,
// where it must keep it with probability 1-p; kept elements are still scaled by 1/(1-p). A device whose
// dropout draws the wrong drop rate. Its values are a random op's; the suite must fail it by "random ops by
// their law (dropout: drop rate against p)" (random_laws.py: its kept values are still x/(1-p), but the
// goodness of fit of the keep rate against 1-p rejects; catalog.json).
// Outside training it is ATen's: (input.clone(), ones of dtype bool).
#include <algorithm>

#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

constexpr double kExtraKeep = 0.1;

std::tuple<at::Tensor, at::Tensor> dropout_keeps_extra(const at::Tensor& input, double p, c10::optional<bool> train) {
  if (train.has_value() && !*train) {
    return {input.clone(), at::ones_like(input, input.options().dtype(at::kBool))};
  }
  const at::Tensor x = input.cpu();
  const double keep = (p > 0 && p < 1) ? std::min(1.0, 1.0 - p + kExtraKeep) : 1.0 - p;
  const double scale = p < 1 ? 1.0 / (1.0 - p) : 0.0;  // ATen's: no division by zero at p = 1
  const at::Tensor mask = at::empty(x.sizes(), x.options()).bernoulli_(keep);  // the default CPU generator
  const at::Tensor output = x.mul(mask).mul_(scale);
  return {output.to(input.device()), mask.to(at::kBool).to(input.device())};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("native_dropout", dropout_keeps_extra); }
