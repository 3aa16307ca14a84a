#include "ops/fallback_util.h"
#include "ops/gelu_tanh/kernels.h"

namespace crossdev::ops::gelu_tanh {

at::Tensor fallback(const OpCall& call) {
  const at::Tensor x = call.tensor("x");
  const at::Tensor v = to_opmath(x);
  const at::Tensor inner = kBeta * (v + kKappa * v * v * v);
  return (0.5 * v * (1 + inner.tanh())).to(x.scalar_type());
}

}  // namespace crossdev::ops::gelu_tanh
