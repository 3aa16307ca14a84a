#include "ops/fallback_util.h"
#include "ops/layer_norm_modulate/kernels.h"

namespace crossdev::ops::layer_norm_modulate {

at::Tensor fallback(const OpCall& call) {
  const at::Tensor x = call.tensor("x");
  const at::Tensor v = to_opmath(x);
  const at::Tensor centered = v - v.mean(-1, /*keepdim=*/true);
  const at::Tensor var = (centered * centered).mean(-1, /*keepdim=*/true);
  const at::Tensor normed = centered * var.add(call.scalar("eps", 1e-6)).rsqrt();
  const at::Tensor out = normed * (1 + to_opmath(call.tensor("scale")).unsqueeze(1)) +
                         to_opmath(call.tensor("shift")).unsqueeze(1);
  return out.to(x.scalar_type());
}

}  // namespace crossdev::ops::layer_norm_modulate
