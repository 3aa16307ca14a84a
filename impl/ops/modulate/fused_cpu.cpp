// Forward: one pass over x. Contiguous operands (the usual case) are read row by row from their
// pointers; any other layout goes through TensorIterator, which broadcasts shift/scale viewed as
// [B|1, 1, D] along T, so the innermost loop is D contiguous elements of x, shift and scale.
// Backward, per row (b, t) of D: grad_x = g (1 + scale[b]) in one pass that also adds g and g x
// into per-thread column sums for grad_shift[b] and grad_scale[b] (row 0 when they are [1, D]),
// blocked in opmath (cpu::ModulatedBackward, modulated_rows.h).
// Compiled once per instruction set (CPU_CAPABILITY, ops/cpu/dispatch.h).
#include <ATen/Dispatch.h>
#include <ATen/Functions.h>

#include "ops/cpu/dispatch.h"
#include "ops/output.h"
#include "ops/cpu/elementwise.h"
#include "ops/cpu/modulated_rows.h"
#include "ops/cpu/rows.h"
#include "ops/modulate/kernels.h"

namespace crossdev::ops::modulate::CPU_CAPABILITY {
namespace {

// x [B, T, D], shift and scale [B|1, D], all contiguous (the usual layout): rows of D read straight
// from the pointers, without the views and the TensorIterator of the general path, which were most
// of a call's time at small sizes ([2, 8, 64]: the per-call figure). Same arithmetic as the general path.
at::Tensor forward_contiguous(const OpCall& call, const at::Tensor& x, const at::Tensor& shift, const at::Tensor& scale) {
  at::Tensor out = output_for(call, x.sizes(), x.options());
  const std::int64_t t_steps = x.size(1);
  const std::int64_t d = x.size(2);
  const std::int64_t rows = x.size(0) * t_steps;
  const bool one_shift = shift.size(0) == 1, one_scale = scale.size(0) == 1;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "modulate_fused_cpu", [&] {
    CROSSDEV_VEC_IO_TYPES(scalar_t);
    const scalar_t* xp = x.const_data_ptr<scalar_t>();
    const scalar_t* shift_p = shift.const_data_ptr<scalar_t>();
    const scalar_t* scale_p = scale.const_data_ptr<scalar_t>();
    scalar_t* op = out.mutable_data_ptr<scalar_t>();
    cpu::parallel_row_ranges(rows, d, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t r = begin; r < end; ++r) {
        const std::int64_t b = r / t_steps;
        const scalar_t* src = xp + r * d;
        const scalar_t* sh = shift_p + (one_shift ? 0 : b) * d;
        const scalar_t* sc = scale_p + (one_scale ? 0 : b) * d;
        scalar_t* dst = op + r * d;
        std::int64_t i = 0;
        for (; i + IO::kWidth <= d; i += IO::kWidth) {
          IO::store(dst + i, at::vec::fmadd(IO::load(src + i), Vec(opmath_t(1)) + IO::load(sc + i), IO::load(sh + i)));
        }
        for (; i < d; ++i) {
          const opmath_t v = static_cast<opmath_t>(src[i]);
          dst[i] = static_cast<scalar_t>(v * (opmath_t(1) + static_cast<opmath_t>(sc[i])) + static_cast<opmath_t>(sh[i]));
        }
      }
    });
  });
  return out;
}

at::Tensor forward(const OpCall& call) {
  const at::Tensor& x_in = call.tensor("x");
  const at::Tensor& shift_in = call.tensor("shift");
  const at::Tensor& scale_in = call.tensor("scale");
  if (x_in.is_contiguous() && shift_in.is_contiguous() && scale_in.is_contiguous()) {
    return forward_contiguous(call, x_in, shift_in, scale_in);
  }
  const at::Tensor x = x_in;
  const at::Tensor shift = shift_in.unsqueeze(1);
  const at::Tensor scale = scale_in.unsqueeze(1);
  at::Tensor out = output_for(call, x.sizes(), x.options());
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

std::vector<at::Tensor> backward(const OpCall& call, const at::Tensor& grad_out) {
  const at::Tensor x = call.tensor("x");
  const at::Tensor scale = call.tensor("scale").contiguous();  // [B|1, D]: small
  cpu::ModulatedBackward grads(x, call.tensor("shift").size(0), scale.size(0));
  const std::int64_t d = grads.d();

  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "modulate_backward_cpu", [&] {
    CROSSDEV_VEC_IO_TYPES(scalar_t);
    // sum_g into grad_shift's sums, sum_gx into grad_scale's.
    grads.run<scalar_t>(x, grad_out, scale, [&](const scalar_t* xrow, const scalar_t* g, const scalar_t* sc,
                                                 opmath_t* sum_g, opmath_t* sum_gx, scalar_t* dst) {
      std::int64_t i = 0;
      for (; i + IO::kWidth <= d; i += IO::kWidth) {
        const Vec gv = IO::load(g + i);
        IO::store(dst + i, gv * (Vec(opmath_t(1)) + IO::load(sc + i)));
        cpu::add_to(sum_g, gv, i);
        cpu::add_to(sum_gx, gv * IO::load(xrow + i), i);
      }
      for (; i < d; ++i) {
        const opmath_t gv = static_cast<opmath_t>(g[i]);
        dst[i] = static_cast<scalar_t>(gv * (opmath_t(1) + static_cast<opmath_t>(sc[i])));
        sum_g[i] += gv;
        sum_gx[i] += gv * static_cast<opmath_t>(xrow[i]);
      }
    });
  });
  return grads.gradients();
}

}  // namespace
}  // namespace crossdev::ops::modulate::CPU_CAPABILITY

CROSSDEV_REGISTER_CPU_KERNELS(modulate, &forward, &backward)
