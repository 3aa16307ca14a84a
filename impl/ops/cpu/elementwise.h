#pragma once
// Elementwise fused kernels over an at::TensorIterator: TensorIterator does broadcasting,
// dimension coalescing and the at::parallel_for split; this loop does the arithmetic. An inner
// loop whose operands are all contiguous runs `vec_op` on Vectorized<opmath> and `scalar_op` on
// the tail; any other inner loop (broadcast or strided operand) runs `scalar_op` with strides.
#include <ATen/TensorIterator.h>

#include <array>
#include <utility>

#include "ops/cpu/vec_io.h"

namespace crossdev::ops::cpu {

namespace detail {
template <typename scalar_t, typename VecOp, std::size_t... K>
auto apply_vec(const VecOp& op, char** data, std::int64_t i, std::index_sequence<K...>) {
  return op(VecIO<scalar_t>::load(reinterpret_cast<const scalar_t*>(data[K + 1]) + i)...);
}
template <typename scalar_t, typename ScalarOp, std::size_t... K>
auto apply_scalar(const ScalarOp& op, char** data, const std::int64_t* strides, std::int64_t i,
                  std::index_sequence<K...>) {
  using opmath_t = typename VecIO<scalar_t>::opmath_t;
  return op(static_cast<opmath_t>(*reinterpret_cast<const scalar_t*>(data[K + 1] + i * strides[K + 1]))...);
}
}  // namespace detail

// One output (operand 0) of scalar_t, N inputs of scalar_t.
template <typename scalar_t, std::size_t N, typename ScalarOp, typename VecOp>
void elementwise(at::TensorIteratorBase& iter, const ScalarOp& scalar_op, const VecOp& vec_op) {
  using IO = VecIO<scalar_t>;
  using opmath_t = typename IO::opmath_t;
  iter.for_each([&](char** data, const std::int64_t* strides, std::int64_t n) {
    bool contiguous = true;
    for (std::size_t k = 0; k <= N; ++k) contiguous = contiguous && strides[k] == sizeof(scalar_t);
    std::int64_t i = 0;
    if (contiguous) {
      for (; i + IO::kWidth <= n; i += IO::kWidth) {
        IO::store(reinterpret_cast<scalar_t*>(data[0]) + i,
                  detail::apply_vec<scalar_t>(vec_op, data, i, std::make_index_sequence<N>{}));
      }
    }
    for (; i < n; ++i) {
      const opmath_t result = detail::apply_scalar<scalar_t>(scalar_op, data, strides, i, std::make_index_sequence<N>{});
      *reinterpret_cast<scalar_t*>(data[0] + i * strides[0]) = static_cast<scalar_t>(result);
    }
  });
}

}  // namespace crossdev::ops::cpu
