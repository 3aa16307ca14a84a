// Per row of Tk keys, read in place through its strides (cpu::RowReader), in a per-task opmath
// row buffer that stays in L1/L2 for typical Tk (4 KiB at Tk = 1024 floats):
//   forward   pass 1: logits = scale * scores into the buffer, masked keys blended to -inf,
//             running max;
//             pass 2: e = exp(logits - max) in place and its sum; pass 3: store e / sum.
//             Scores are read once and the output written once.
//   backward  y recomputed the same way (zeros where masked, so fully masked rows get zero
//             gradients); dot = sum(g y); grad_scores = scale y (g - dot).
// exp is at::vec's exp_u20, the one ATen's own softmax kernel uses (vec::Vectorized, Sleef-based
// polynomial in the AVX2/AVX512 copies; libm in DEFAULT). The mask is viewed expanded to the
// scores' shape, so its row offset follows its own (possibly zero) strides.
// Compiled once per instruction set (CPU_CAPABILITY, ops/cpu/dispatch.h).
#include <ATen/Dispatch.h>
#include <ATen/Functions.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ops/cpu/dispatch.h"
#include "ops/cpu/lane_bits.h"
#include "ops/output.h"
#include "ops/cpu/rows.h"
#include "ops/scaled_masked_softmax/kernels.h"

namespace crossdev::ops::scaled_masked_softmax::CPU_CAPABILITY {
namespace {

// Writes exp(scale * row - max) into buf (zeros at masked keys) and returns 1 / sum, or 0 when
// every key is masked (the row's result is then all zeros).
template <typename scalar_t, typename opmath_t = typename cpu::VecIO<scalar_t>::opmath_t>
opmath_t exp_row(const scalar_t* row, const bool* mrow, std::int64_t tk, opmath_t scale, opmath_t* buf) {
  using IO = cpu::VecIO<scalar_t>;
  using Vec = typename IO::Vec;
  const opmath_t neg_inf = -std::numeric_limits<opmath_t>::infinity();
  Vec vmax(neg_inf);
  std::int64_t i = 0;
  if (mrow == nullptr) {
    for (; i + IO::kWidth <= tk; i += IO::kWidth) {
      const Vec v = IO::load(row + i) * Vec(scale);
      v.store(buf + i);
      vmax = at::vec::maximum(vmax, v);
    }
    for (std::int64_t j = i; j < tk; ++j) buf[j] = static_cast<opmath_t>(row[j]) * scale;  // tail: max below
  } else {
    // The mask bytes as lane bits (one byte compare, cpu/lane_bits.h), then a blend: no branch
    // on the (unpredictable) mask.
    for (; i + IO::kWidth <= tk; i += IO::kWidth) {
      const Vec v = cpu::select_lanes<opmath_t>(cpu::nonzero_bits<Vec::size()>(mrow + i), IO::load(row + i) * Vec(scale), neg_inf);
      v.store(buf + i);
      vmax = at::vec::maximum(vmax, v);
    }
    for (std::int64_t j = i; j < tk; ++j) buf[j] = mrow[j] ? neg_inf : static_cast<opmath_t>(row[j]) * scale;  // tail: max below
  }
  opmath_t max = at::vec::vec_reduce_all<opmath_t>([](Vec a, Vec b) { return at::vec::maximum(a, b); }, vmax);
  for (; i < tk; ++i) max = std::max(max, buf[i]);
  if (max == neg_inf) {  // every key masked (or every logit -inf)
    std::fill(buf, buf + tk, opmath_t(0));
    return opmath_t(0);
  }
  Vec acc(opmath_t(0));
  i = 0;
  for (; i + Vec::size() <= tk; i += Vec::size()) {
    const Vec e = (Vec::loadu(buf + i) - Vec(max)).exp_u20();
    e.store(buf + i);
    acc = acc + e;
  }
  opmath_t sum = cpu::reduce_add<opmath_t>(acc);
  for (; i < tk; ++i) {
    buf[i] = std::exp(buf[i] - max);
    sum += buf[i];
  }
  return opmath_t(1) / sum;
}

struct Rows {
  at::Tensor scores;
  at::Tensor mask;  // expanded to the scores' shape, or undefined
  std::int64_t tk = 0;
  std::int64_t rows = 0;
};

Rows rows_of(const OpCall& call) {
  Rows r{call.tensor("scores"), call.tensor("mask")};
  if (r.mask.defined()) r.mask = r.mask.expand(r.scores.sizes());
  r.tk = r.scores.size(-1);
  r.rows = r.tk == 0 ? 0 : r.scores.numel() / r.tk;
  return r;
}

at::Tensor forward(const OpCall& call) {
  const Rows in = rows_of(call);
  at::Tensor out = output_for(call, in.scores.sizes(), in.scores.options());
  if (in.rows == 0) return out;
  const double scale = call.scalar("scale", 1.0);

  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, in.scores.scalar_type(), "scaled_masked_softmax_fused_cpu", [&] {
    using IO = cpu::VecIO<scalar_t>;
    using opmath_t = typename IO::opmath_t;
    using Vec = typename IO::Vec;
    const cpu::RowReader<scalar_t> sr(in.scores);
    const std::optional<cpu::RowReader<bool>> mr =
        in.mask.defined() ? std::optional<cpu::RowReader<bool>>(in.mask) : std::nullopt;
    scalar_t* op = out.mutable_data_ptr<scalar_t>();
    const std::int64_t tk = in.tk;
    cpu::parallel_row_ranges(in.rows, tk, [&](std::int64_t begin, std::int64_t end) {
      std::vector<opmath_t> buffer(static_cast<std::size_t>(tk));
      std::vector<scalar_t> scratch = cpu::scratch_for<scalar_t>(tk, !sr.rows_contiguous());
      std::vector<char> mask_scratch(mr && !mr->rows_contiguous() ? static_cast<std::size_t>(tk) : 0);
      opmath_t* buf = buffer.data();
      for (std::int64_t r = begin; r < end; ++r) {
        const bool* mrow = mr ? mr->row(r, reinterpret_cast<bool*>(mask_scratch.data())) : nullptr;
        const opmath_t inv = exp_row(sr.row(r, scratch.data()), mrow, tk, static_cast<opmath_t>(scale), buf);
        scalar_t* dst = op + r * tk;
        std::int64_t i = 0;
        for (; i + IO::kWidth <= tk; i += IO::kWidth) IO::store(dst + i, Vec::loadu(buf + i) * Vec(inv));
        for (; i < tk; ++i) dst[i] = static_cast<scalar_t>(buf[i] * inv);
      }
    });
  });
  return out;
}

std::vector<at::Tensor> backward(const OpCall& call, const at::Tensor& grad_out) {
  const Rows in = rows_of(call);
  at::Tensor grad = at::empty(in.scores.sizes(), in.scores.options().memory_format(at::MemoryFormat::Contiguous));
  if (in.rows == 0) return {grad, at::Tensor()};
  const double scale = call.scalar("scale", 1.0);

  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, in.scores.scalar_type(), "scaled_masked_softmax_backward_cpu", [&] {
    using IO = cpu::VecIO<scalar_t>;
    using opmath_t = typename IO::opmath_t;
    using Vec = typename IO::Vec;
    const cpu::RowReader<scalar_t> sr(in.scores), gr(grad_out);
    const std::optional<cpu::RowReader<bool>> mr =
        in.mask.defined() ? std::optional<cpu::RowReader<bool>>(in.mask) : std::nullopt;
    scalar_t* op = grad.mutable_data_ptr<scalar_t>();
    const std::int64_t tk = in.tk;
    const opmath_t scale_v = static_cast<opmath_t>(scale);
    cpu::parallel_row_ranges(in.rows, tk, [&](std::int64_t begin, std::int64_t end) {
      std::vector<opmath_t> buffer(static_cast<std::size_t>(tk));
      std::vector<scalar_t> scratch = cpu::scratch_for<scalar_t>(tk, !sr.rows_contiguous());
      std::vector<scalar_t> g_scratch = cpu::scratch_for<scalar_t>(tk, !gr.rows_contiguous());
      std::vector<char> mask_scratch(mr && !mr->rows_contiguous() ? static_cast<std::size_t>(tk) : 0);
      opmath_t* buf = buffer.data();
      for (std::int64_t r = begin; r < end; ++r) {
        const bool* mrow = mr ? mr->row(r, reinterpret_cast<bool*>(mask_scratch.data())) : nullptr;
        const opmath_t inv = exp_row(sr.row(r, scratch.data()), mrow, tk, scale_v, buf);
        const scalar_t* g = gr.row(r, g_scratch.data());
        // y = e * inv in place; dot = sum(g y)
        Vec acc(opmath_t(0));
        std::int64_t i = 0;
        for (; i + IO::kWidth <= tk; i += IO::kWidth) {
          const Vec y = Vec::loadu(buf + i) * Vec(inv);
          y.store(buf + i);
          acc = at::vec::fmadd(IO::load(g + i), y, acc);
        }
        opmath_t dot = cpu::reduce_add<opmath_t>(acc);
        for (; i < tk; ++i) {
          buf[i] *= inv;
          dot += static_cast<opmath_t>(g[i]) * buf[i];
        }
        scalar_t* dst = op + r * tk;
        i = 0;
        for (; i + IO::kWidth <= tk; i += IO::kWidth) {
          IO::store(dst + i, Vec(scale_v) * Vec::loadu(buf + i) * (IO::load(g + i) - Vec(dot)));
        }
        for (; i < tk; ++i) dst[i] = static_cast<scalar_t>(scale_v * buf[i] * (static_cast<opmath_t>(g[i]) - dot));
      }
    });
  });
  return {grad, at::Tensor()};
}

}  // namespace
}  // namespace crossdev::ops::scaled_masked_softmax::CPU_CAPABILITY

CROSSDEV_REGISTER_CPU_KERNELS(scaled_masked_softmax, &forward, &backward)
