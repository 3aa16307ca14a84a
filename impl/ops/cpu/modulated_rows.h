#pragma once
// The backward of a row kernel on x [B, T, D] modulated per batch by shift and scale [B|1, D]
// (modulate, layer_norm_modulate): grad_x row by row, by the op's own arithmetic, and grad_shift[b]
// and grad_scale[b] as column sums over the rows of batch b (over every row when they are [1, D]):
// per-thread partials (rows_with_partials, rows.h) blocked in opmath (BlockedColumnSums,
// column_sums.h), rounded once to the gradients' dtype.
#include <ATen/Functions.h>
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "ops/cpu/column_sums.h"
#include "ops/cpu/rows.h"

// Everything here is compiled once per instruction set (impl/ops/CMakeLists.txt).
namespace crossdev::ops::cpu {
inline namespace CPU_CAPABILITY {

class ModulatedBackward {
 public:
  // The gradients' tensors, allocated contiguous: x is [B, T, D], shift and scale have
  // shift_rows and scale_rows rows (B or 1).
  ModulatedBackward(const at::Tensor& x, std::int64_t shift_rows, std::int64_t scale_rows)
      : t_steps_(x.size(1)), d_(x.size(2)), rows_(x.size(0) * x.size(1)), shift_rows_(shift_rows),
        scale_rows_(scale_rows) {
    const at::TensorOptions options = x.options().memory_format(at::MemoryFormat::Contiguous);
    grad_x_ = at::empty(x.sizes(), options);
    grad_shift_ = at::empty({shift_rows, d_}, options);
    grad_scale_ = at::empty({scale_rows, d_}, options);
  }

  std::int64_t d() const { return d_; }

  // fn(x_row, g_row, scale_row, shift_sums, scale_sums, dst) for every row (b, t), in parallel:
  // the rows of x and grad_out (RowReader), row b of scale (contiguous), the opmath blocks whose
  // column sums become grad_shift[b] and grad_scale[b] (D elements each: fn adds the row's terms
  // into them), and grad_x's row. Then the sums are stored into grad_shift and grad_scale.
  template <typename scalar_t, typename RowFn>
  void run(const at::Tensor& x, const at::Tensor& grad_out, const at::Tensor& scale, const RowFn& fn) {
    using opmath_t = typename VecIO<scalar_t>::opmath_t;
    using acc_t = column_acc_t<opmath_t>;
    const std::int64_t t_steps = t_steps_, d = d_, shift_rows = shift_rows_, scale_rows = scale_rows_;
    const RowReader<scalar_t> xr(x), gr(grad_out);
    const scalar_t* scale_p = scale.const_data_ptr<scalar_t>();
    scalar_t* gxp = grad_x_.mutable_data_ptr<scalar_t>();
    const std::vector<acc_t> total = rows_with_partials<acc_t>(
        rows_, (shift_rows + scale_rows) * d, [&](std::int64_t begin, std::int64_t end, acc_t* partial) {
          BlockedColumnSums<opmath_t, acc_t, 2> blocks(d);  // [shift sums | scale sums] of the current rows
          for_each_row_pair(xr, gr, begin, end, [&](std::int64_t r, const scalar_t* row, const scalar_t* g) {
            const std::int64_t b = r / t_steps;
            opmath_t* shift_sums = blocks.row({partial + (shift_rows == 1 ? 0 : b) * d,
                                               partial + (shift_rows + (scale_rows == 1 ? 0 : b)) * d});
            fn(row, g, scale_p + (scale_rows == 1 ? 0 : b) * d, shift_sums, shift_sums + d, gxp + r * d);
          });
          blocks.flush();
        });
    store_column_sums(total.data(), grad_shift_.mutable_data_ptr<scalar_t>(), shift_rows * d);
    store_column_sums(total.data() + shift_rows * d, grad_scale_.mutable_data_ptr<scalar_t>(), scale_rows * d);
  }

  // {grad_x, grad_shift, grad_scale}.
  std::vector<at::Tensor> gradients() const { return {grad_x_, grad_shift_, grad_scale_}; }

 private:
  std::int64_t t_steps_, d_, rows_, shift_rows_, scale_rows_;
  at::Tensor grad_x_, grad_shift_, grad_scale_;
};

}  // namespace CPU_CAPABILITY
}  // namespace crossdev::ops::cpu
