// Per row (b, t): a mean pass, a centered sum-of-squares pass (two-pass for stability), and one
// output pass that normalizes and modulates with row b of shift/scale (row 0 when they are [1, D]).
#include <ATen/Dispatch.h>
#include <ATen/Functions.h>

#include <cmath>
#include <type_traits>

#include "ops/cpu/rows.h"
#include "ops/layer_norm_modulate/kernels.h"

namespace crossdev::ops::layer_norm_modulate {

at::Tensor fused_cpu(const OpCall& call) {
  const at::Tensor x = call.tensor("x").contiguous();
  const at::Tensor shift = call.tensor("shift").contiguous();
  const at::Tensor scale = call.tensor("scale").contiguous();
  at::Tensor out = at::empty(x.sizes(), x.options());
  const std::int64_t t_steps = x.size(1);
  const std::int64_t d = x.size(2);
  const std::int64_t rows = x.size(0) * t_steps;
  const std::int64_t shift_batch_stride = shift.size(0) == 1 ? 0 : d;
  const std::int64_t scale_batch_stride = scale.size(0) == 1 ? 0 : d;
  const double eps = call.scalar("eps", 1e-6);

  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "layer_norm_modulate_fused_cpu", [&] {
    using IO = cpu::VecIO<scalar_t>;
    using opmath_t = typename IO::opmath_t;
    using Vec = typename IO::Vec;
    const scalar_t* xp = x.const_data_ptr<scalar_t>();
    const scalar_t* shift_p = shift.const_data_ptr<scalar_t>();
    const scalar_t* scale_p = scale.const_data_ptr<scalar_t>();
    scalar_t* op = out.mutable_data_ptr<scalar_t>();
    cpu::parallel_rows(rows, d, [&](std::int64_t r) {
      const std::int64_t b = r / t_steps;
      const scalar_t* row = xp + r * d;
      const scalar_t* sh = shift_p + b * shift_batch_stride;
      const scalar_t* sc = scale_p + b * scale_batch_stride;
      scalar_t* dst = op + r * d;
      const opmath_t mean = cpu::row_sum(row, d, [](const auto& v) { return v; }) / static_cast<opmath_t>(d);
      const opmath_t sum_sq = cpu::row_sum(row, d, [mean](const auto& v) {
        using V = std::decay_t<decltype(v)>;  // Vectorized<opmath> or opmath
        const V c = v - V(mean);
        return c * c;
      });
      const opmath_t rstd =
          opmath_t(1) / std::sqrt(sum_sq / static_cast<opmath_t>(d) + static_cast<opmath_t>(eps));
      const Vec one(opmath_t(1));
      std::int64_t i = 0;
      for (; i + IO::kWidth <= d; i += IO::kWidth) {
        const Vec normed = (IO::load(row + i) - Vec(mean)) * Vec(rstd);
        IO::store(dst + i, at::vec::fmadd(normed, one + IO::load(sc + i), IO::load(sh + i)));
      }
      for (; i < d; ++i) {
        const opmath_t normed = (static_cast<opmath_t>(row[i]) - mean) * rstd;
        dst[i] = static_cast<scalar_t>(normed * (opmath_t(1) + static_cast<opmath_t>(sc[i])) + static_cast<opmath_t>(sh[i]));
      }
    });
  });
  return out;
}

}  // namespace crossdev::ops::layer_norm_modulate
