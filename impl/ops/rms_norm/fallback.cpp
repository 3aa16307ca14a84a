#include "ops/fallback_util.h"
#include "ops/rms_norm/kernels.h"

namespace crossdev::ops::rms_norm {

at::Tensor fallback(const OpCall& call) {
  const at::Tensor x = call.tensor("x");
  const at::Tensor v = to_opmath(x);
  const at::Tensor inv_rms = (v * v).mean(-1, /*keepdim=*/true).add(call.scalar("eps", 1e-6)).rsqrt();
  return (v * inv_rms * to_opmath(call.tensor("weight"))).to(x.scalar_type());
}

}  // namespace crossdev::ops::rms_norm
