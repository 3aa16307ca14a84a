// Per row: one vectorized pass for the sum of squares (accumulated in opmath), one for the output.
#include <ATen/Dispatch.h>
#include <ATen/Functions.h>

#include <cmath>

#include "ops/cpu/rows.h"
#include "ops/rms_norm/kernels.h"

namespace crossdev::ops::rms_norm {
namespace {


}  // namespace

at::Tensor fused_cpu(const OpCall& call) {
  const at::Tensor x = call.tensor("x").contiguous();
  const at::Tensor weight = call.tensor("weight").contiguous();
  at::Tensor out = at::empty(x.sizes(), x.options());
  const std::int64_t d = x.dim() == 0 ? 1 : x.size(-1);
  const std::int64_t rows = d == 0 ? 0 : x.numel() / d;
  const double eps = call.scalar("eps", 1e-6);

  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "rms_norm_fused_cpu", [&] {
    using IO = cpu::VecIO<scalar_t>;
    using opmath_t = typename IO::opmath_t;
    using Vec = typename IO::Vec;
    const scalar_t* xp = x.const_data_ptr<scalar_t>();
    const scalar_t* wp = weight.const_data_ptr<scalar_t>();
    scalar_t* op = out.mutable_data_ptr<scalar_t>();
    cpu::parallel_rows(rows, d, [&](std::int64_t r) {
      const scalar_t* row = xp + r * d;
      scalar_t* dst = op + r * d;
      const opmath_t sum_sq = cpu::row_sum(row, d, [](const auto& v) { return v * v; });
      const opmath_t inv_rms = opmath_t(1) / std::sqrt(sum_sq / static_cast<opmath_t>(d) + static_cast<opmath_t>(eps));
      std::int64_t i = 0;
      for (; i + IO::kWidth <= d; i += IO::kWidth) {
        IO::store(dst + i, IO::load(row + i) * Vec(inv_rms) * IO::load(wp + i));
      }
      for (; i < d; ++i) {
        dst[i] = static_cast<scalar_t>(static_cast<opmath_t>(row[i]) * inv_rms * static_cast<opmath_t>(wp[i]));
      }
    });
  });
  return out;
}

}  // namespace crossdev::ops::rms_norm
