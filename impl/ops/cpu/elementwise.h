#pragma once
// Elementwise fused kernels over an at::TensorIterator: TensorIterator does broadcasting,
// dimension coalescing and the at::parallel_for split; this loop does the arithmetic. An inner
// loop whose operands are all contiguous runs `vec_op` on Vectorized<opmath> and `scalar_op` on
// the tail; any other inner loop (broadcast or strided operand) runs `scalar_op` with strides.
// elementwise_range: the same arithmetic over operands that are all contiguous and of one shape,
// straight from their pointers, without building a TensorIterator (at small sizes building it was
// most of a call's time: the per-call figure).
#include <ATen/TensorIterator.h>

#include <array>
#include <utility>

#include "ops/cpu/vec_io.h"

namespace crossdev::ops::cpu {
inline namespace CPU_CAPABILITY {  // compiled once per instruction set

namespace detail {
template <typename scalar_t, typename VecOp, std::size_t... K>
auto apply_vec(const VecOp& op, char** data, std::int64_t i, std::index_sequence<K...>) {
  return op(VecIO<scalar_t>::load(reinterpret_cast<const scalar_t*>(data[K + 1]) + i)...);
}
template <typename scalar_t, typename VecOp, std::size_t... K>
auto apply_vec_at(const VecOp& op, const scalar_t* const* in, std::int64_t i, std::index_sequence<K...>) {
  return op(VecIO<scalar_t>::load(in[K] + i)...);
}
template <typename scalar_t, typename ScalarOp, std::size_t... K>
auto apply_scalar_at(const ScalarOp& op, const scalar_t* const* in, std::int64_t i,
                     std::index_sequence<K...>) {
  using opmath_t = typename VecIO<scalar_t>::opmath_t;
  return op(static_cast<opmath_t>(in[K][i])...);
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

// Elements [begin, end) of one contiguous output and N contiguous inputs of the same shape
// (in[0..N)). The caller splits the elements across threads with cpu::parallel_row_ranges(n, 1, ...)
// (rows.h; ATen's grain size, as TensorIterator splits them) in its own lambda: a parallel region
// opened in here would be named after this template's lambda arguments, a symbol objdump cannot
// demangle, so check_capability_symbols.py could not place its vector code in this copy.
template <typename scalar_t, std::size_t N, typename ScalarOp, typename VecOp>
void elementwise_range(scalar_t* out, const scalar_t* const* in, std::int64_t begin, std::int64_t end,
                       const ScalarOp& scalar_op, const VecOp& vec_op) {
  using IO = VecIO<scalar_t>;
  std::int64_t i = begin;
  for (; i + IO::kWidth <= end; i += IO::kWidth) {
    IO::store(out + i, detail::apply_vec_at<scalar_t>(vec_op, in, i, std::make_index_sequence<N>{}));
  }
  for (; i < end; ++i) {
    out[i] = static_cast<scalar_t>(detail::apply_scalar_at<scalar_t>(scalar_op, in, i, std::make_index_sequence<N>{}));
  }
}

}  // namespace CPU_CAPABILITY
}  // namespace crossdev::ops::cpu

namespace crossdev::ops::cpu {
inline namespace CPU_CAPABILITY {

// NOut outputs of out_t (operands 0..NOut-1), then NIn inputs of in_t. out_t is in_t, or the
// opmath type when the caller reduces the outputs afterwards (sums to a broadcast input's shape
// in opmath, rounding once). `vec_op` returns std::array<Vec, NOut>, `scalar_op`
// std::array<opmath_t, NOut>. The iterator must be built with check_all_same_dtype(false) when
// out_t differs from in_t.
template <typename in_t, typename out_t, std::size_t NOut, std::size_t NIn, typename ScalarOp, typename VecOp>
void elementwise_multi(at::TensorIteratorBase& iter, const ScalarOp& scalar_op, const VecOp& vec_op) {
  using IO = VecIO<in_t>;
  using OutIO = VecIO<out_t>;
  using opmath_t = typename IO::opmath_t;
  static_assert(std::is_same_v<typename OutIO::opmath_t, opmath_t>, "outputs must share the inputs' opmath type");
  iter.for_each([&](char** data, const std::int64_t* strides, std::int64_t n) {
    bool contiguous = true;
    for (std::size_t k = 0; k < NOut; ++k) contiguous = contiguous && strides[k] == sizeof(out_t);
    for (std::size_t k = NOut; k < NOut + NIn; ++k) contiguous = contiguous && strides[k] == sizeof(in_t);
    std::int64_t i = 0;
    if (contiguous) {
      for (; i + IO::kWidth <= n; i += IO::kWidth) {
        const auto out = detail::apply_vec<in_t>(vec_op, data + (NOut - 1), i, std::make_index_sequence<NIn>{});
        for (std::size_t k = 0; k < NOut; ++k) OutIO::store(reinterpret_cast<out_t*>(data[k]) + i, out[k]);
      }
    }
    for (; i < n; ++i) {
      const auto out =
          detail::apply_scalar<in_t>(scalar_op, data + (NOut - 1), strides + (NOut - 1), i, std::make_index_sequence<NIn>{});
      for (std::size_t k = 0; k < NOut; ++k) *reinterpret_cast<out_t*>(data[k] + i * strides[k]) = static_cast<out_t>(out[k]);
    }
  });
}

}  // namespace CPU_CAPABILITY
}  // namespace crossdev::ops::cpu
