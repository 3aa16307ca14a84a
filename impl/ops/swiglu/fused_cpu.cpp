// One elementwise pass; TensorIterator broadcasts gate against up.
#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>
#include <ATen/Functions.h>

#include <cmath>

#include "ops/cpu/elementwise.h"
#include "ops/swiglu/kernels.h"

namespace crossdev::ops::swiglu {

at::Tensor fused_cpu(const OpCall& call) {
  at::Tensor gate = call.tensor("gate");
  at::Tensor up = call.tensor("up");
  at::Tensor out = at::empty(at::infer_size(gate.sizes(), up.sizes()), gate.options());
  auto iter = at::TensorIteratorConfig().add_output(out).add_const_input(gate).add_const_input(up).build();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, gate.scalar_type(), "swiglu_fused_cpu", [&] {
    using Vec = typename cpu::VecIO<scalar_t>::Vec;
    using opmath_t = typename cpu::VecIO<scalar_t>::opmath_t;
    cpu::elementwise<scalar_t, 2>(
        iter, [](opmath_t g, opmath_t u) { return g / (opmath_t(1) + std::exp(-g)) * u; },
        [](Vec g, Vec u) { return g / (Vec(opmath_t(1)) + g.neg().exp()) * u; });
  });
  return out;
}

}  // namespace crossdev::ops::swiglu
