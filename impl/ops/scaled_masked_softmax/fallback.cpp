#include <limits>

#include "ops/fallback_util.h"
#include "ops/scaled_masked_softmax/kernels.h"

namespace crossdev::ops::scaled_masked_softmax {

at::Tensor fallback(const OpCall& call) {
  const at::Tensor scores = call.tensor("scores");
  at::Tensor logits = to_opmath(scores) * call.scalar("scale", 1.0);
  const at::Tensor mask = call.tensor("mask");
  if (!mask.defined()) return logits.softmax(-1).to(scores.scalar_type());
  logits = logits.masked_fill(mask, -std::numeric_limits<double>::infinity());
  // Fully masked rows are NaN after softmax; they are defined as zeros.
  const at::Tensor probabilities = logits.softmax(-1).masked_fill(mask, 0.0);
  return probabilities.to(scores.scalar_type());
}

}  // namespace crossdev::ops::scaled_masked_softmax
