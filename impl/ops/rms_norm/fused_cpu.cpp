// Per row of D, read in place through its strides (cpu::RowReader), accumulated in opmath:
//   forward   one vectorized pass for the sum of squares, one for the output;
//   backward  with r = 1 / sqrt(mean(x^2) + eps) and dot = sum(g w x):
//             grad_x = r g w - x r^3 dot / D, grad_weight = sum over rows of g x r (per-thread
//             column sums, cpu::rows_with_partials); three passes over the row, in L1.
// Compiled once per instruction set (CPU_CAPABILITY, ops/cpu/dispatch.h).
#include <ATen/Dispatch.h>
#include <ATen/Functions.h>

#include <cmath>

#include "ops/cpu/dispatch.h"
#include "ops/output.h"
#include "ops/cpu/rows.h"
#include "ops/rms_norm/kernels.h"

namespace crossdev::ops::rms_norm::CPU_CAPABILITY {
namespace {

std::int64_t row_length(const at::Tensor& x) { return x.dim() == 0 ? 1 : x.size(-1); }

at::Tensor forward(const OpCall& call) {
  const at::Tensor x = call.tensor("x");
  const at::Tensor weight = call.tensor("weight").contiguous();
  at::Tensor out = output_for(call, x.sizes(), x.options());
  const std::int64_t d = row_length(x);
  const std::int64_t rows = d == 0 ? 0 : x.numel() / d;
  const double eps = call.scalar("eps", 1e-6);

  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "rms_norm_fused_cpu", [&] {
    CROSSDEV_VEC_IO_TYPES(scalar_t);
    const cpu::RowReader<scalar_t> xr(x);
    const scalar_t* wp = weight.const_data_ptr<scalar_t>();
    scalar_t* op = out.mutable_data_ptr<scalar_t>();
    cpu::parallel_row_ranges(rows, d, [&](std::int64_t begin, std::int64_t end) {
      std::vector<scalar_t> scratch = cpu::scratch_for<scalar_t>(d, !xr.rows_contiguous());
      for (std::int64_t r = begin; r < end; ++r) {
        const scalar_t* row = xr.row(r, scratch.data());
        scalar_t* dst = op + r * d;
        const opmath_t sum_sq = cpu::row_sum(row, d, [](const auto& v) { return v * v; });
        const opmath_t inv_rms =
            opmath_t(1) / std::sqrt(sum_sq / static_cast<opmath_t>(d) + static_cast<opmath_t>(eps));
        std::int64_t i = 0;
        for (; i + IO::kWidth <= d; i += IO::kWidth) {
          IO::store(dst + i, IO::load(row + i) * Vec(inv_rms) * IO::load(wp + i));
        }
        for (; i < d; ++i) {
          dst[i] = static_cast<scalar_t>(static_cast<opmath_t>(row[i]) * inv_rms * static_cast<opmath_t>(wp[i]));
        }
      }
    });
  });
  return out;
}

std::vector<at::Tensor> backward(const OpCall& call, const at::Tensor& grad_out) {
  const at::Tensor x = call.tensor("x");
  const at::Tensor weight = call.tensor("weight").contiguous();
  at::Tensor grad_x = at::empty(x.sizes(), x.options().memory_format(at::MemoryFormat::Contiguous));
  const std::int64_t d = row_length(x);
  const std::int64_t rows = d == 0 ? 0 : x.numel() / d;
  const double eps = call.scalar("eps", 1e-6);
  at::Tensor grad_weight = at::empty({d}, x.options().dtype(at::kDouble)  /* cpu::column_acc_t */);

  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "rms_norm_backward_cpu", [&] {
    CROSSDEV_VEC_IO_TYPES(scalar_t);
    using acc_t = cpu::column_acc_t<opmath_t>;
    const cpu::RowReader<scalar_t> xr(x), gr(grad_out);
    const scalar_t* wp = weight.const_data_ptr<scalar_t>();
    scalar_t* gxp = grad_x.mutable_data_ptr<scalar_t>();
    const opmath_t inv_d = opmath_t(1) / static_cast<opmath_t>(std::max<std::int64_t>(d, 1));
    const std::vector<acc_t> total =
        cpu::rows_with_partials<acc_t>(rows, d, [&](std::int64_t begin, std::int64_t end, acc_t* partial) {
          cpu::for_each_row_pair(xr, gr, begin, end, [&](std::int64_t r, const scalar_t* row, const scalar_t* g) {
            scalar_t* dst = gxp + r * d;
            const opmath_t sum_sq = cpu::row_sum(row, d, [](const auto& v) { return v * v; });
            const opmath_t inv = opmath_t(1) / std::sqrt(sum_sq * inv_d + static_cast<opmath_t>(eps));
            // dot = sum(g w x)
            Vec acc(opmath_t(0));
            std::int64_t i = 0;
            for (; i + IO::kWidth <= d; i += IO::kWidth) {
              acc = at::vec::fmadd(IO::load(g + i) * IO::load(wp + i), IO::load(row + i), acc);
            }
            opmath_t dot = cpu::reduce_add<opmath_t>(acc);
            for (; i < d; ++i) {
              dot += static_cast<opmath_t>(g[i]) * static_cast<opmath_t>(wp[i]) * static_cast<opmath_t>(row[i]);
            }
            const opmath_t coef = inv * inv * inv * dot * inv_d;
            i = 0;
            for (; i + IO::kWidth <= d; i += IO::kWidth) {
              const Vec gv = IO::load(g + i);
              const Vec xv = IO::load(row + i);
              IO::store(dst + i, Vec(inv) * gv * IO::load(wp + i) - xv * Vec(coef));
              cpu::accumulate(partial, gv * xv * Vec(inv), i);
            }
            for (; i < d; ++i) {
              const opmath_t gv = static_cast<opmath_t>(g[i]);
              const opmath_t xv = static_cast<opmath_t>(row[i]);
              dst[i] = static_cast<scalar_t>(inv * gv * static_cast<opmath_t>(wp[i]) - xv * coef);
              partial[i] += gv * xv * inv;
            }
          });
        });
    std::copy(total.begin(), total.end(), grad_weight.mutable_data_ptr<acc_t>());
  });
  return {grad_x, grad_weight.to(x.scalar_type())};
}

}  // namespace
}  // namespace crossdev::ops::rms_norm::CPU_CAPABILITY

CROSSDEV_REGISTER_CPU_KERNELS(rms_norm, &forward, &backward)
