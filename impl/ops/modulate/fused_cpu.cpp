// One pass over x: TensorIterator broadcasts shift/scale viewed as [B|1, 1, D] along T, so the
// innermost loop is D contiguous elements of x, shift and scale and vectorizes.
#include <ATen/Dispatch.h>
#include <ATen/Functions.h>

#include "ops/cpu/elementwise.h"
#include "ops/modulate/kernels.h"
#include "ops/mutants.h"

namespace crossdev::ops::modulate {
namespace {

// The broken variant: row t of shift/scale comes from batch t % B, i.e. it varies along T and
// is broadcast along B, the wrong axis.
at::Tensor broadcast_rows(const at::Tensor& rows, std::int64_t time_steps, bool wrong_axis) {
  if (!wrong_axis) return rows.unsqueeze(1);
  const at::Tensor index = at::arange(time_steps, rows.options().dtype(at::kLong)).remainder(rows.size(0));
  return rows.index_select(0, index).unsqueeze(0);
}

}  // namespace

at::Tensor fused_cpu(const OpCall& call) {
  const at::Tensor x = call.tensor("x");
  const bool wrong_axis = mutant_active(Mutant::ModulateWrongBroadcastAxis);
  const at::Tensor shift = broadcast_rows(call.tensor("shift"), x.size(1), wrong_axis);
  const at::Tensor scale = broadcast_rows(call.tensor("scale"), x.size(1), wrong_axis);
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
