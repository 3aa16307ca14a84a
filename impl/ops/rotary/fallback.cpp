#include <ATen/Functions.h>

#include "ops/fallback_util.h"
#include "ops/rotary/kernels.h"

namespace crossdev::ops::rotary {

at::Tensor fallback(const OpCall& call) {
  const at::Tensor x = call.tensor("x");
  const at::Tensor v = to_opmath(x);
  const std::int64_t half = v.size(-1) / 2;
  const at::Tensor rotated = at::cat({-v.narrow(-1, half, half), v.narrow(-1, 0, half)}, -1);
  const at::Tensor cos = to_opmath(call.tensor("cos")).unsqueeze(1);  // [T|1, 1, Dh]
  const at::Tensor sin = to_opmath(call.tensor("sin")).unsqueeze(1);
  return (v * cos + rotated * sin).to(x.scalar_type());
}

}  // namespace crossdev::ops::rotary
