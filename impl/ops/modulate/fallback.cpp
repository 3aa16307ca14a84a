#include "ops/fallback_util.h"
#include "ops/modulate/kernels.h"

namespace crossdev::ops::modulate {

at::Tensor fallback(const OpCall& call) {
  const at::Tensor x = call.tensor("x");
  const at::Tensor out = to_opmath(x) * (1 + to_opmath(call.tensor("scale")).unsqueeze(1)) +
                         to_opmath(call.tensor("shift")).unsqueeze(1);
  return out.to(x.scalar_type());
}

}  // namespace crossdev::ops::modulate
