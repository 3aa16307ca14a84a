#pragma once
// Row kernels (norms, rotary, softmax): inputs are made contiguous in their own (small) shapes,
// the output is allocated contiguous, and at::parallel_for splits the rows so each task keeps
// about GRAIN_SIZE elements. Each row is read and written once per pass in cache.
#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdint>

#include "ops/cpu/vec_io.h"

namespace crossdev::ops::cpu {

// Elements per parallel task; the value of ATen's kGrainElements (TensorIterator.h).
constexpr std::int64_t kGrainElements = 32768;

template <typename RowFn>
void parallel_rows(std::int64_t rows, std::int64_t row_length, const RowFn& fn) {
  const std::int64_t grain = std::max<std::int64_t>(1, kGrainElements / std::max<std::int64_t>(1, row_length));
  at::parallel_for(0, rows, grain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) fn(r);
  });
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

}  // namespace crossdev::ops::cpu
