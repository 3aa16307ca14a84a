#pragma once
// Column sums of a row kernel's backward, blocked: the gradient of a per-column parameter
// (modulate's and layer_norm_modulate's grad_shift / grad_scale) is a sum over rows. A task adds
// each row into a small block in opmath (float for float/float16/bfloat16), vectorized, and adds
// the block into its partial in column_acc_t (double) every kBlockRows rows, or when the rows'
// destination changes: a two-level cascade, as ATen's CPU sum of float adds runs of at least 16
// terms in float and then combines the runs (cascade_sum, aten/src/ATen/native/cpu/SumKernel.cpp).
// The row loop stays vectorized;
// adding every row's vector into double lane by lane was most of the backward's time at 1M.
// The partials themselves come from cpu::rows_with_partials (rows.h).
#include <array>
#include <cstdint>
#include <vector>

#include "ops/cpu/vec_io.h"

// Everything here is compiled once per instruction set (impl/ops/CMakeLists.txt).
namespace crossdev::ops::cpu {
inline namespace CPU_CAPABILITY {

// Rows summed in opmath before the block is added into the partial: the float part of the
// cascade sums at most this many terms (ATen's cascade_sum: runs of 2^level_power >= 16).
constexpr std::int64_t kBlockRows = 16;

// `Segments` column sums of `length` columns each, accumulated for one task's rows. Per row:
//   opmath_t* block = sums.row({dest_0, dest_1});   // dest_k: where segment k's sums go
//   ... block[k * length + i] += value ...           // vectorized (add_to)
// and sums.flush() once after the task's last row.
template <typename opmath_t, typename acc_t, int Segments>
class BlockedColumnSums {
 public:
  using Destinations = std::array<acc_t*, Segments>;

  explicit BlockedColumnSums(std::int64_t length)
      : length_(length), block_(static_cast<std::size_t>(Segments * length), opmath_t(0)) {}

  // The block for one more row whose segment k adds into destinations[k][0 .. length).
  opmath_t* row(const Destinations& destinations) {
    if (rows_ == kBlockRows || (rows_ > 0 && destinations != destinations_)) flush();
    destinations_ = destinations;
    ++rows_;
    return block_.data();
  }

  // Adds the block into its destinations and clears it.
  void flush() {
    if (rows_ == 0) return;
    for (int k = 0; k < Segments; ++k) {
      acc_t* dst = destinations_[k];
      opmath_t* src = block_.data() + k * length_;
      for (std::int64_t i = 0; i < length_; ++i) {
        dst[i] += static_cast<acc_t>(src[i]);
        src[i] = opmath_t(0);
      }
    }
    rows_ = 0;
  }

 private:
  std::int64_t length_;
  std::vector<opmath_t> block_;
  Destinations destinations_{};
  std::int64_t rows_ = 0;
};

// block[i .. i + size) += v.
template <typename opmath_t>
inline void add_to(opmath_t* block, const at::vec::Vectorized<opmath_t>& v, std::int64_t i) {
  (at::vec::Vectorized<opmath_t>::loadu(block + i) + v).store(block + i);
}

// dst[0 .. n) = the column sums total[0 .. n), rounded to the gradient's dtype (as .to(dtype) would).
template <typename acc_t, typename scalar_t>
void store_column_sums(const acc_t* total, scalar_t* dst, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) dst[i] = static_cast<scalar_t>(total[i]);
}

}  // namespace CPU_CAPABILITY
}  // namespace crossdev::ops::cpu
