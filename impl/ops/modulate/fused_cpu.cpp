// One pass over x: TensorIterator broadcasts shift/scale viewed as [B|1, 1, D] along T, so the
// innermost loop is D contiguous elements of x, shift and scale and vectorizes.
#include <ATen/Dispatch.h>
#include <ATen/Functions.h>

#include "ops/cpu/elementwise.h"
#include "ops/modulate/kernels.h"

namespace crossdev::ops::modulate {
at::Tensor fused_cpu(const OpCall& call) {
  const at::Tensor x = call.tensor("x");
  const at::Tensor shift = call.tensor("shift").unsqueeze(1);
  const at::Tensor scale = call.tensor("scale").unsqueeze(1);
  at::Tensor out = at::empty(x.sizes(), x.options());
  auto iter = at::TensorIteratorConfig()
                  .add_output(out)
                  .add_const_input(x)
                  .add_const_input(shift)
                  .add_const_input(scale)
                  .build();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "modulate_fused_cpu", [&] {
    using Vec = typename cpu::VecIO<scalar_t>::Vec;
    using opmath_t = typename cpu::VecIO<scalar_t>::opmath_t;
    cpu::elementwise<scalar_t, 3>(
        iter, [](opmath_t v, opmath_t sh, opmath_t sc) { return v * (opmath_t(1) + sc) + sh; },
        [](Vec v, Vec sh, Vec sc) { return at::vec::fmadd(v, Vec(opmath_t(1)) + sc, sh); });
  });
  return out;
}

}  // namespace crossdev::ops::modulate
