// Per row (b, t, h) of Dh elements, vectorized over i < h:
//   forward   out[i] = x[i] c[i] - x[i+h] s[i]        out[i+h] = x[i+h] c[i+h] + x[i] s[i+h]
//   backward  gx[i]  = g[i] c[i] + g[i+h] s[i+h]      gx[i+h]  = g[i+h] c[i+h] - g[i] s[i]
// (the backward applies the transposed rotation, so both share one kernel; cos's and sin's
// gradients are ATen reductions, table_gradients in fallback.cpp). x (or grad) is read
// in place through its strides (cpu::RowReader); cos/sin, small tables, are made contiguous.
// Compiled once per instruction set (CPU_CAPABILITY, ops/cpu/dispatch.h).
#include <ATen/Dispatch.h>
#include <ATen/Functions.h>

#include "ops/cpu/dispatch.h"
#include "ops/output.h"
#include "ops/cpu/rows.h"
#include "ops/rotary/kernels.h"

namespace crossdev::ops::rotary::CPU_CAPABILITY {
namespace {

at::Tensor rotate(const at::Tensor& input, const at::Tensor& cos_in, const at::Tensor& sin_in, bool transpose,
                  const OpCall* call_with_out) {
  const at::Tensor& x = input;
  const at::Tensor cos = cos_in.contiguous();
  const at::Tensor sin = sin_in.contiguous();
  at::Tensor out = call_with_out != nullptr ? output_for(*call_with_out, x.sizes(), x.options())
                                            : at::empty(x.sizes(), x.options().memory_format(at::MemoryFormat::Contiguous));
  const std::int64_t t_steps = x.size(1);
  const std::int64_t heads = x.size(2);
  const std::int64_t dh = x.size(3);
  const std::int64_t half = dh / 2;
  const std::int64_t rows = x.size(0) * t_steps * heads;
  const std::int64_t table_stride = cos.size(0) == 1 ? 0 : dh;

  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "rotary_fused_cpu", [&] {
    CROSSDEV_VEC_IO_TYPES(scalar_t);
    const cpu::RowReader<scalar_t> xr(x);
    const scalar_t* cp = cos.const_data_ptr<scalar_t>();
    const scalar_t* sp = sin.const_data_ptr<scalar_t>();
    scalar_t* op = out.mutable_data_ptr<scalar_t>();
    // forward: lo' = lo*c_lo - hi*s_lo, hi' = hi*c_hi + lo*s_hi; transpose flips the signs and
    // swaps which half of sin multiplies.
    const opmath_t sign_value = transpose ? opmath_t(1) : opmath_t(-1);
    cpu::parallel_row_ranges(rows, dh, [&](std::int64_t begin, std::int64_t end) {
      // Locals, not the captured references: a store through dst may alias a captured float
      // (the sign), which the compiler would then reload on every row.
      const opmath_t sign = sign_value;
      const Vec sign_v(sign);
      const std::int64_t n_heads = heads, n_steps = t_steps, half_dh = half, row_dh = dh, stride = table_stride;
      const scalar_t* const cos_p = cp;
      const scalar_t* const sin_p = sp;
      scalar_t* const out_p = op;
      const bool backward = transpose;
      // Contiguous x (the usual case): row r lies at x + r Dh; otherwise RowReader gathers it.
      const scalar_t* const x_p = xr.rows_contiguous() && x.is_contiguous() ? x.const_data_ptr<scalar_t>() : nullptr;
      std::vector<scalar_t> scratch = cpu::scratch_for<scalar_t>(row_dh, !xr.rows_contiguous());
      // Row r is (b, t, h) = (r / (T H), r / H % T, r % H): t is stepped, not divided, per row.
      std::int64_t h = begin % n_heads, t = begin / n_heads % n_steps;
      for (std::int64_t r = begin; r < end; ++r) {
        const scalar_t* row = x_p != nullptr ? x_p + r * row_dh : xr.row(r, scratch.data());
        const scalar_t* c = cos_p + t * stride;
        const scalar_t* s = sin_p + t * stride;
        scalar_t* dst = out_p + r * row_dh;
        // Sine factor applied to the partner element: forward uses s at the destination index,
        // backward uses s at the partner's index.
        const scalar_t* s_for_lo = backward ? s + half_dh : s;
        const scalar_t* s_for_hi = backward ? s : s + half_dh;
        std::int64_t i = 0;
        for (; i + IO::kWidth <= half_dh; i += IO::kWidth) {
          const Vec lo = IO::load(row + i);
          const Vec hi = IO::load(row + half_dh + i);
          IO::store(dst + i, at::vec::fmadd(sign_v * hi, IO::load(s_for_lo + i), lo * IO::load(c + i)));
          IO::store(dst + half_dh + i, at::vec::fnmadd(sign_v * lo, IO::load(s_for_hi + i), hi * IO::load(c + half_dh + i)));
        }
        for (; i < half_dh; ++i) {
          const opmath_t lo = static_cast<opmath_t>(row[i]);
          const opmath_t hi = static_cast<opmath_t>(row[half_dh + i]);
          dst[i] = static_cast<scalar_t>(lo * static_cast<opmath_t>(c[i]) + sign * hi * static_cast<opmath_t>(s_for_lo[i]));
          dst[half_dh + i] = static_cast<scalar_t>(hi * static_cast<opmath_t>(c[half_dh + i]) -
                                                   sign * lo * static_cast<opmath_t>(s_for_hi[i]));
        }
        if (++h == n_heads) {
          h = 0;
          if (++t == n_steps) t = 0;
        }
      }
    });
  });
  return out;
}

at::Tensor forward(const OpCall& call) {
  return rotate(call.tensor("x"), call.tensor("cos"), call.tensor("sin"), /*transpose=*/false, &call);
}

// grad_x by the kernel; grad_cos and grad_sin, reductions over B and H, by ATen (table_gradients).
std::vector<at::Tensor> backward(const OpCall& call, const at::Tensor& grad_out) {
  std::vector<at::Tensor> tables = table_gradients(call, grad_out);
  return {rotate(grad_out, call.tensor("cos"), call.tensor("sin"), /*transpose=*/true, nullptr), std::move(tables[0]),
          std::move(tables[1])};
}

}  // namespace
}  // namespace crossdev::ops::rotary::CPU_CAPABILITY

CROSSDEV_REGISTER_CPU_KERNELS(rotary, &forward, &backward)
