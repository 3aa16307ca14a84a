#include "ops/fallback_util.h"
#include "ops/swiglu/kernels.h"

namespace crossdev::ops::swiglu {

at::Tensor fallback(const OpCall& call) {
  const at::Tensor gate = to_opmath(call.tensor("gate"));
  const at::Tensor up = to_opmath(call.tensor("up"));
  return (gate * gate.sigmoid() * up).to(call.tensor("gate").scalar_type());
}

}  // namespace crossdev::ops::swiglu
