#pragma once
// Gradients of per-feature parameters (modulate's and layer_norm_modulate's shift/scale rows,
// rms_norm's weight): sums over the rows of a [R, D] gradient, in opmath, without atomics.
//   R rows form `groups` consecutive groups of R / groups rows (the batch b of x[B, T, D]; 1 for
//   rms_norm). Each group is cut into chunks of rows; block (k-tile, group * chunks + chunk) sums
//   its rows for D/blockDim columns (coalesced along D) into a [chunks, groups, D] opmath buffer,
//   and at::sum over the chunks finishes the reduction (deterministic: fixed order).
//   sum_g[grp, k]  = sum_r g[r, k]
//   sum_gy[grp, k] = sum_r g[r, k] * y[r, k],   y = (x[r, k] - mean[r]) * rstd[r]  (x when no stats)
#include <ATen/Functions.h>

#include <utility>
#include <vector>

#include "ops/cuda/launch.cuh"
#include "ops/op_spec.h"

namespace crossdev::ops::cuda {

template <typename scalar_t>
__global__ void column_partials_kernel(const scalar_t* __restrict__ g, const scalar_t* __restrict__ x,
                                       const at::opmath_type<scalar_t>* __restrict__ mean,
                                       const at::opmath_type<scalar_t>* __restrict__ rstd,
                                       at::opmath_type<scalar_t>* __restrict__ part_g,
                                       at::opmath_type<scalar_t>* __restrict__ part_gy, std::int64_t rows_per_group,
                                       std::int64_t d, std::int64_t rows_per_chunk, std::int64_t chunks,
                                       std::int64_t groups) {
  using opmath_t = at::opmath_type<scalar_t>;
  const std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (k >= d) return;
  const std::int64_t group = blockIdx.y / chunks;
  const std::int64_t chunk = blockIdx.y % chunks;
  const std::int64_t first = group * rows_per_group + chunk * rows_per_chunk;
  const std::int64_t chunk_end = (chunk + 1) * rows_per_chunk;
  const std::int64_t last = group * rows_per_group + (chunk_end < rows_per_group ? chunk_end : rows_per_group);
  opmath_t sum_g = 0, sum_gy = 0;
  for (std::int64_t r = first; r < last; ++r) {
    const opmath_t gv = static_cast<opmath_t>(g[r * d + k]);
    opmath_t y = static_cast<opmath_t>(x[r * d + k]);
    if (mean != nullptr) y = (y - mean[r]) * rstd[r];
    else if (rstd != nullptr) y = y * rstd[r];
    sum_g += gv;
    sum_gy += gv * y;
  }
  const std::int64_t at = (chunk * groups + group) * d + k;
  if (part_g != nullptr) part_g[at] = sum_g;
  part_gy[at] = sum_gy;
}

// g, x: contiguous with R * d elements. mean/rstd: opmath [R] or undefined. Returns opmath
// ([groups, d] sum of g or undefined when !want_sum_g, [groups, d] sum of g * y).
template <typename scalar_t>
std::pair<at::Tensor, at::Tensor> column_sums(const at::Tensor& g, const at::Tensor& x, const at::Tensor& mean,
                                              const at::Tensor& rstd, std::int64_t groups, std::int64_t d,
                                              bool want_sum_g) {
  using opmath_t = at::opmath_type<scalar_t>;
  const auto opts = x.options().dtype(c10::CppTypeToScalarType<opmath_t>::value);
  const std::int64_t rows = d == 0 ? 0 : x.numel() / d;
  const std::int64_t rows_per_group = groups == 0 ? 0 : rows / groups;
  if (rows_per_group == 0 || d == 0) {
    return {want_sum_g ? at::zeros({groups, d}, opts) : at::Tensor(), at::zeros({groups, d}, opts)};
  }
  TORCH_CHECK(groups <= 65535, "column_sums: too many groups for the grid");
  constexpr std::int64_t kRowsPerChunk = 32;
  std::int64_t chunks = (rows_per_group + kRowsPerChunk - 1) / kRowsPerChunk;
  chunks = std::max<std::int64_t>(1, std::min<std::int64_t>(chunks, 65535 / groups));
  const std::int64_t rows_per_chunk = (rows_per_group + chunks - 1) / chunks;
  at::Tensor part_g = want_sum_g ? at::empty({chunks, groups, d}, opts) : at::Tensor();
  at::Tensor part_gy = at::empty({chunks, groups, d}, opts);
  const dim3 grid(static_cast<unsigned>((d + kThreads - 1) / kThreads), static_cast<unsigned>(chunks * groups));
  column_partials_kernel<scalar_t><<<grid, kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      g.const_data_ptr<scalar_t>(), x.const_data_ptr<scalar_t>(),
      mean.defined() ? mean.const_data_ptr<opmath_t>() : nullptr,
      rstd.defined() ? rstd.const_data_ptr<opmath_t>() : nullptr,
      want_sum_g ? part_g.mutable_data_ptr<opmath_t>() : nullptr, part_gy.mutable_data_ptr<opmath_t>(), rows_per_group,
      d, rows_per_chunk, chunks, groups);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return {want_sum_g ? part_g.sum(0) : at::Tensor(), part_gy.sum(0)};
}

// [groups, D] opmath sums -> the gradient of a [rows, D] parameter (rows 1: summed over groups
// too), rounded once to `dtype`.
inline at::Tensor rows_gradient(const at::Tensor& sums, std::int64_t param_rows, at::ScalarType dtype) {
  const at::Tensor reduced = param_rows == 1 && sums.size(0) != 1 ? sums.sum(0, /*keepdim=*/true) : sums;
  return reduced.to(dtype);
}

// The backward of an op on x [B, T, D] modulated per batch by shift and scale [B|1, D] (modulate,
// layer_norm_modulate): its operands made contiguous, on x's device (the guard), and grad_x, which
// the op's kernel writes; grad_shift[b] = sum_t g and grad_scale[b] = sum_t g y (y: x, or the
// normalized x with the rows' mean and rstd) from column_sums.
struct ModulatedBackward {
  // Member order is the order of construction: the operands, then the guard, then grad_x.
  ModulatedBackward(const OpCall& call, const at::Tensor& grad_out)
      : x(call.tensor("x").contiguous()),
        shift_rows(call.tensor("shift").size(0)),
        scale(call.tensor("scale").contiguous()),
        g(grad_out.contiguous()),
        guard(x.device()),
        grad_x(at::empty(x.sizes(), x.options())) {}

  // grad_shift and grad_scale; mean and rstd: the rows' statistics (opmath [B * T]) or undefined.
  template <typename scalar_t>
  void parameter_gradients(const at::Tensor& mean, const at::Tensor& rstd) {
    auto [sum_g, sum_gy] = column_sums<scalar_t>(g, x, mean, rstd, x.size(0), x.size(2), true);
    grad_shift = rows_gradient(sum_g, shift_rows, x.scalar_type());
    grad_scale = rows_gradient(sum_gy, scale.size(0), x.scalar_type());
  }

  // {grad_x, grad_shift, grad_scale}.
  std::vector<at::Tensor> gradients() const { return {grad_x, grad_shift, grad_scale}; }

  const at::Tensor x;
  const std::int64_t shift_rows;
  const at::Tensor scale;
  const at::Tensor g;
  const c10::cuda::CUDAGuard guard;
  at::Tensor grad_x, grad_shift, grad_scale;
};

}  // namespace crossdev::ops::cuda
