#pragma once
// Row kernels (norms, rotary, softmax) and the row-wise backward kernels. A row is the last
// dimension of a tensor; rows are read in place through the tensor's own strides (RowReader),
// never by copying the tensor: a row whose elements are adjacent is used where it lies, any other
// row (a transposed or expanded view) is gathered into a per-task scratch row that stays in L1.
// Outputs are allocated contiguous. at::parallel_for splits the rows so each task keeps about
// GRAIN_SIZE elements; each row is read once per pass, in cache.
#include "ops/cpu/parallel.h"
#include <ATen/core/Tensor.h>
#include <c10/util/SmallVector.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "ops/cpu/vec_io.h"

// Everything here is compiled once per instruction set (impl/ops/CMakeLists.txt).
namespace crossdev::ops::cpu {
inline namespace CPU_CAPABILITY {

// Elements per parallel task; the value of ATen's kGrainElements (TensorIterator.h).
constexpr std::int64_t kGrainElements = 32768;

inline std::int64_t row_grain(std::int64_t row_length) {
  return std::max<std::int64_t>(1, kGrainElements / std::max<std::int64_t>(1, row_length));
}

// fn(r) for every row r in [0, rows), in parallel.
template <typename RowFn>
void parallel_rows(std::int64_t rows, std::int64_t row_length, const RowFn& fn) {
  at::parallel_for(0, rows, row_grain(row_length), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) fn(r);
  });
}

// fn(begin, end) for ranges of rows, in parallel (for kernels that keep a scratch row per task).
template <typename RangeFn>
void parallel_row_ranges(std::int64_t rows, std::int64_t row_length, const RangeFn& fn) {
  at::parallel_for(0, rows, row_grain(row_length), fn);
}

// Rows of a tensor of any strides: row r is the r-th in row-major order over all dimensions but
// the last. Leading dimensions that collapse to one stride (a contiguous or row-sliced tensor)
// take one multiply; others (a transposed or expanded view) a division per dimension.
template <typename scalar_t>
class RowReader {
 public:
  explicit RowReader(const at::Tensor& t)
      : base_(t.const_data_ptr<scalar_t>()),
        length_(t.dim() == 0 ? 1 : t.size(-1)),
        inner_stride_(t.dim() == 0 ? 1 : t.stride(-1)) {
    for (std::int64_t k = 0; k + 1 < t.dim(); ++k) {
      if (t.size(k) == 1) continue;
      sizes_.push_back(t.size(k));
      strides_.push_back(t.stride(k));
    }
    // Collapse: dims k, k+1 merge when stride[k] == stride[k+1] * size[k+1].
    flat_ = true;
    for (std::size_t k = 0; k + 1 < sizes_.size(); ++k) {
      flat_ = flat_ && strides_[k] == strides_[k + 1] * sizes_[k + 1];
    }
    row_stride_ = sizes_.empty() ? 0 : strides_.back();
  }

  std::int64_t length() const { return length_; }
  bool rows_contiguous() const { return inner_stride_ == 1 || length_ <= 1; }

  // Element offset of row r's first element.
  std::int64_t offset(std::int64_t r) const {
    if (flat_) return r * row_stride_;
    std::int64_t off = 0;
    for (std::int64_t k = static_cast<std::int64_t>(sizes_.size()) - 1; k >= 0; --k) {
      off += (r % sizes_[k]) * strides_[k];
      r /= sizes_[k];
    }
    return off;
  }

  // Row r as adjacent elements: in place, or gathered into `scratch` (length() elements).
  const scalar_t* row(std::int64_t r, scalar_t* scratch) const {
    const scalar_t* p = base_ + offset(r);
    if (rows_contiguous()) return p;
    for (std::int64_t i = 0; i < length_; ++i) scratch[i] = p[i * inner_stride_];
    return scratch;
  }

 private:
  const scalar_t* base_;
  std::int64_t length_;
  std::int64_t inner_stride_;
  c10::SmallVector<std::int64_t, 6> sizes_, strides_;
  bool flat_ = true;
  std::int64_t row_stride_ = 0;
};

// A scratch row per task for RowReader::row (empty when no reader needs one).
template <typename scalar_t>
std::vector<scalar_t> scratch_for(std::int64_t length, bool needed) {
  return std::vector<scalar_t>(needed ? static_cast<std::size_t>(length) : 0);
}

// A backward kernel's rows [begin, end) of one task: fn(r, x_row, g_row) with row r of x and of
// grad_out (rows of x's length), each read in place or gathered into this task's scratch row.
template <typename scalar_t, typename RowFn>
void for_each_row_pair(const RowReader<scalar_t>& xr, const RowReader<scalar_t>& gr, std::int64_t begin,
                       std::int64_t end, const RowFn& fn) {
  std::vector<scalar_t> xs = scratch_for<scalar_t>(xr.length(), !xr.rows_contiguous());
  std::vector<scalar_t> gs = scratch_for<scalar_t>(xr.length(), !gr.rows_contiguous());
  for (std::int64_t r = begin; r < end; ++r) fn(r, xr.row(r, xs.data()), gr.row(r, gs.data()));
}

// Sum of map(v[i]) over a row, vectorized, accumulated in opmath. `map` is generic: it is
// called with Vectorized<opmath> for the body and with opmath scalars for the tail.
template <typename scalar_t, typename Map>
typename VecIO<scalar_t>::opmath_t row_sum(const scalar_t* v, std::int64_t n, const Map& map) {
  using IO = VecIO<scalar_t>;
  using opmath_t = typename IO::opmath_t;
  using Vec = typename IO::Vec;
  Vec acc(opmath_t(0));
  std::int64_t i = 0;
  for (; i + IO::kWidth <= n; i += IO::kWidth) acc = acc + map(IO::load(v + i));
  opmath_t total = reduce_add<opmath_t>(acc);
  for (; i < n; ++i) total += map(static_cast<opmath_t>(v[i]));
  return total;
}

// Sum of map(a[i], b[i]) over a row (two operands of one dtype).
template <typename scalar_t, typename Map>
typename VecIO<scalar_t>::opmath_t row_sum2(const scalar_t* a, const scalar_t* b, std::int64_t n, const Map& map) {
  using IO = VecIO<scalar_t>;
  using opmath_t = typename IO::opmath_t;
  using Vec = typename IO::Vec;
  Vec acc(opmath_t(0));
  std::int64_t i = 0;
  for (; i + IO::kWidth <= n; i += IO::kWidth) acc = acc + map(IO::load(a + i), IO::load(b + i));
  opmath_t total = reduce_add<opmath_t>(acc);
  for (; i < n; ++i) total += map(static_cast<opmath_t>(a[i]), static_cast<opmath_t>(b[i]));
  return total;
}

// Parameter gradients of row kernels are sums over rows (thousands of terms, often cancelling):
// they accumulate in column_acc_t, double for float/float16/bfloat16 (ATen's CPU reductions
// use a cascade sum for the same reason), so the sum is not the error's bottleneck.
template <typename opmath_t>
using column_acc_t = std::conditional_t<std::is_same_v<opmath_t, float>, double, opmath_t>;

// The rows are cut into one contiguous chunk per thread; fn(begin, end, partial) adds its
// chunk's sums into `partial` (`width` column_acc_t values, zeroed), and the partials are added
// in chunk order, so the result does not depend on scheduling. Returns the `width` totals.
template <typename acc_t, typename ChunkFn>
std::vector<acc_t> rows_with_partials(std::int64_t rows, std::int64_t width, const ChunkFn& fn) {
  const std::int64_t chunks = std::max<std::int64_t>(1, std::min<std::int64_t>(at::get_num_threads(), rows));
  std::vector<acc_t> partials(static_cast<std::size_t>(chunks * width), acc_t(0));
  at::parallel_for(0, chunks, 1, [&](std::int64_t cb, std::int64_t ce) {
    for (std::int64_t c = cb; c < ce; ++c) {
      fn(rows * c / chunks, rows * (c + 1) / chunks, partials.data() + c * width);
    }
  });
  std::vector<acc_t> total(partials.begin(), partials.begin() + width);
  for (std::int64_t c = 1; c < chunks; ++c) {
    const acc_t* p = partials.data() + c * width;
    for (std::int64_t i = 0; i < width; ++i) total[static_cast<std::size_t>(i)] += p[i];
  }
  return total;
}

// partial[i .. i + size) += v (widened to acc_t).
template <typename acc_t, typename opmath_t>
void accumulate(acc_t* partial, const at::vec::Vectorized<opmath_t>& v, std::int64_t i) {
  using Vec = at::vec::Vectorized<opmath_t>;
  if constexpr (std::is_same_v<acc_t, opmath_t>) {
    (Vec::loadu(partial + i) + v).store(partial + i);
  } else {
    __at_align__ opmath_t values[Vec::size()];
    v.store(values);
    for (std::int64_t k = 0; k < Vec::size(); ++k) partial[i + k] += static_cast<acc_t>(values[k]);
  }
}

}  // namespace CPU_CAPABILITY
}  // namespace crossdev::ops::cpu
