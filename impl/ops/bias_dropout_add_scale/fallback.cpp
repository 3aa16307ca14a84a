#include "ops/bias_dropout_add_scale/kernels.h"
#include "ops/fallback_util.h"
#include "ops/portable_random.h"

namespace crossdev::ops::bias_dropout_add_scale {

at::Tensor fallback(const OpCall& call) {
  const at::Tensor x = call.tensor("x");
  at::Tensor v = to_opmath(x);
  if (call.has_tensor("bias")) v = v + to_opmath(call.tensor("bias"));
  if (dropout_active(call)) {
    const double p = call.scalar("p", 0.0);
    const generator_stream::Stream stream = draw_mask_stream(call);
    const at::Tensor keep = portable_random::dropout_keep_mask(stream.seed, stream.offset, v.sizes(), p, v.device());
    v = v * keep.to(v.scalar_type()) * portable_random::dropout_survivor_scale(p);
  }
  at::Tensor out = call.has_tensor("scale") ? to_opmath(call.tensor("scale")) * v : v * call.scalar("scale_value", 1.0);
  if (call.has_tensor("residual")) out = out + to_opmath(call.tensor("residual"));
  return out.to(x.scalar_type());
}

}  // namespace crossdev::ops::bias_dropout_add_scale
