// Per row (b, t) of D, read in place through its strides (cpu::RowReader), in opmath:
//   forward   a mean pass, a centered sum-of-squares pass (two-pass for stability), and one
//             output pass that normalizes and modulates with row b of shift/scale (row 0 when
//             they are [1, D]); the statistics of four rows are computed before their outputs;
//   backward  with n = (x - mean) rstd and gn = g (1 + scale[b]):
//             grad_x = rstd (gn - mean(gn) - n mean(gn n)); grad_shift[b] = sum_t g,
//             grad_scale[b] = sum_t g n (per-thread column sums blocked in opmath:
//             cpu::ModulatedBackward, modulated_rows.h).
// Compiled once per instruction set (CPU_CAPABILITY, ops/cpu/dispatch.h).
#include <ATen/Dispatch.h>
#include <ATen/Functions.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <type_traits>
#include <utility>

#include "ops/cpu/dispatch.h"
#include "ops/output.h"
#include "ops/cpu/modulated_rows.h"
#include "ops/cpu/rows.h"
#include "ops/layer_norm_modulate/kernels.h"

namespace crossdev::ops::layer_norm_modulate::CPU_CAPABILITY {
namespace {

// Sum of map(v[i]) over a row in opmath, with four vector accumulators: with one, the row is a
// chain of d / kWidth dependent adds (cpu::row_sum), the latency bound of the statistics passes.
template <typename scalar_t, typename Map>
typename cpu::VecIO<scalar_t>::opmath_t row_sum_unrolled(const scalar_t* v, std::int64_t n, const Map& map) {
  CROSSDEV_VEC_IO_TYPES(scalar_t);
  constexpr std::int64_t w = IO::kWidth;
  Vec acc0(opmath_t(0)), acc1(opmath_t(0)), acc2(opmath_t(0)), acc3(opmath_t(0));
  std::int64_t i = 0;
  for (; i + 4 * w <= n; i += 4 * w) {
    acc0 = acc0 + map(IO::load(v + i));
    acc1 = acc1 + map(IO::load(v + i + w));
    acc2 = acc2 + map(IO::load(v + i + 2 * w));
    acc3 = acc3 + map(IO::load(v + i + 3 * w));
  }
  for (; i + w <= n; i += w) acc0 = acc0 + map(IO::load(v + i));
  opmath_t total = cpu::reduce_add<opmath_t>((acc0 + acc1) + (acc2 + acc3));
  for (; i < n; ++i) total += map(static_cast<opmath_t>(v[i]));
  return total;
}

// Rows whose statistics the forward computes together before their output passes.
constexpr std::int64_t kStatsRows = 4;

// (mean, rstd) of one row.
template <typename scalar_t, typename opmath_t = typename cpu::VecIO<scalar_t>::opmath_t>
C10_ALWAYS_INLINE std::pair<opmath_t, opmath_t> row_stats(const scalar_t* row, std::int64_t d, double eps) {
  const opmath_t mean = row_sum_unrolled(row, d, [](const auto& v) { return v; }) / static_cast<opmath_t>(d);
  const opmath_t sum_sq = row_sum_unrolled(row, d, [mean](const auto& v) {
    using V = std::decay_t<decltype(v)>;  // Vectorized<opmath> or opmath
    const V c = v - V(mean);
    return c * c;
  });
  return {mean, opmath_t(1) / std::sqrt(sum_sq / static_cast<opmath_t>(d) + static_cast<opmath_t>(eps))};
}

at::Tensor forward(const OpCall& call) {
  const at::Tensor x = call.tensor("x");
  const at::Tensor shift = call.tensor("shift").contiguous();  // [B|1, D]: small
  const at::Tensor scale = call.tensor("scale").contiguous();
  at::Tensor out = output_for(call, x.sizes(), x.options());
  const std::int64_t t_steps = x.size(1);
  const std::int64_t d = x.size(2);
  const std::int64_t rows = x.size(0) * t_steps;
  const std::int64_t shift_batch_stride = shift.size(0) == 1 ? 0 : d;
  const std::int64_t scale_batch_stride = scale.size(0) == 1 ? 0 : d;
  const double eps = call.scalar("eps", 1e-6);

  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "layer_norm_modulate_fused_cpu", [&] {
    CROSSDEV_VEC_IO_TYPES(scalar_t);
    const cpu::RowReader<scalar_t> xr(x);
    const scalar_t* shift_p = shift.const_data_ptr<scalar_t>();
    const scalar_t* scale_p = scale.const_data_ptr<scalar_t>();
    scalar_t* op = out.mutable_data_ptr<scalar_t>();
    cpu::parallel_row_ranges(rows, d, [&](std::int64_t begin, std::int64_t end) {
      // The statistics of kStatsRows rows first, then their output passes: the rows' reduction,
      // sqrt and division chains are independent and overlap, where one row at a time would wait
      // on each (short rows: the per-call figure at D = 64).
      std::vector<scalar_t> scratch = cpu::scratch_for<scalar_t>(kStatsRows * d, !xr.rows_contiguous());
      const Vec one(opmath_t(1));
      for (std::int64_t first = begin; first < end; first += kStatsRows) {
        const std::int64_t count = std::min(kStatsRows, end - first);
        const scalar_t* group_rows[kStatsRows];
        opmath_t means[kStatsRows], rstds[kStatsRows];
        for (std::int64_t k = 0; k < count; ++k) {
          group_rows[k] = xr.row(first + k, scratch.data() + (scratch.empty() ? 0 : k * d));
          std::tie(means[k], rstds[k]) = row_stats(group_rows[k], d, eps);
        }
        for (std::int64_t k = 0; k < count; ++k) {
          const std::int64_t r = first + k;
          const std::int64_t b = r / t_steps;
          const scalar_t* row = group_rows[k];
          const scalar_t* sh = shift_p + b * shift_batch_stride;
          const scalar_t* sc = scale_p + b * scale_batch_stride;
          scalar_t* dst = op + r * d;
          const opmath_t mean = means[k], rstd = rstds[k];
          std::int64_t i = 0;
          for (; i + IO::kWidth <= d; i += IO::kWidth) {
            const Vec normed = (IO::load(row + i) - Vec(mean)) * Vec(rstd);
            IO::store(dst + i, at::vec::fmadd(normed, one + IO::load(sc + i), IO::load(sh + i)));
          }
          for (; i < d; ++i) {
            const opmath_t normed = (static_cast<opmath_t>(row[i]) - mean) * rstd;
            dst[i] = static_cast<scalar_t>(normed * (opmath_t(1) + static_cast<opmath_t>(sc[i])) +
                                           static_cast<opmath_t>(sh[i]));
          }
        }
      }
    });
  });
  return out;
}

std::vector<at::Tensor> backward(const OpCall& call, const at::Tensor& grad_out) {
  const at::Tensor x = call.tensor("x");
  const at::Tensor scale = call.tensor("scale").contiguous();
  cpu::ModulatedBackward grads(x, call.tensor("shift").size(0), scale.size(0));
  const std::int64_t d = grads.d();
  const double eps = call.scalar("eps", 1e-6);

  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "layer_norm_modulate_backward_cpu", [&] {
    CROSSDEV_VEC_IO_TYPES(scalar_t);
    const opmath_t inv_d = opmath_t(1) / static_cast<opmath_t>(std::max<std::int64_t>(d, 1));
    const Vec one(opmath_t(1));
    // sum_g into grad_shift's sums, sum_gn into grad_scale's.
    grads.run<scalar_t>(x, grad_out, scale, [&](const scalar_t* row, const scalar_t* g, const scalar_t* sc,
                                                 opmath_t* sum_g, opmath_t* sum_gn, scalar_t* dst) {
      const auto [mean, rstd] = row_stats(row, d, eps);
      // mean(gn) and mean(gn n); the parameter sums on the same pass.
      Vec acc_gn(opmath_t(0)), acc_gnn(opmath_t(0));
      std::int64_t i = 0;
      for (; i + IO::kWidth <= d; i += IO::kWidth) {
        const Vec gv = IO::load(g + i);
        const Vec n = (IO::load(row + i) - Vec(mean)) * Vec(rstd);
        const Vec gn = gv * (one + IO::load(sc + i));
        acc_gn = acc_gn + gn;
        acc_gnn = at::vec::fmadd(gn, n, acc_gnn);
        cpu::add_to(sum_g, gv, i);
        cpu::add_to(sum_gn, gv * n, i);
      }
      opmath_t s_gn = cpu::reduce_add<opmath_t>(acc_gn), s_gnn = cpu::reduce_add<opmath_t>(acc_gnn);
      for (; i < d; ++i) {
        const opmath_t gv = static_cast<opmath_t>(g[i]);
        const opmath_t n = (static_cast<opmath_t>(row[i]) - mean) * rstd;
        const opmath_t gn = gv * (opmath_t(1) + static_cast<opmath_t>(sc[i]));
        s_gn += gn;
        s_gnn += gn * n;
        sum_g[i] += gv;
        sum_gn[i] += gv * n;
      }
      const opmath_t m_gn = s_gn * inv_d, m_gnn = s_gnn * inv_d;
      i = 0;
      for (; i + IO::kWidth <= d; i += IO::kWidth) {
        const Vec n = (IO::load(row + i) - Vec(mean)) * Vec(rstd);
        const Vec gn = IO::load(g + i) * (one + IO::load(sc + i));
        IO::store(dst + i, Vec(rstd) * (gn - Vec(m_gn) - n * Vec(m_gnn)));
      }
      for (; i < d; ++i) {
        const opmath_t n = (static_cast<opmath_t>(row[i]) - mean) * rstd;
        const opmath_t gn = static_cast<opmath_t>(g[i]) * (opmath_t(1) + static_cast<opmath_t>(sc[i]));
        dst[i] = static_cast<scalar_t>(rstd * (gn - m_gn - n * m_gnn));
      }
    });
  });
  return grads.gradients();
}

}  // namespace
}  // namespace crossdev::ops::layer_norm_modulate::CPU_CAPABILITY

CROSSDEV_REGISTER_CPU_KERNELS(layer_norm_modulate, &forward, &backward)
