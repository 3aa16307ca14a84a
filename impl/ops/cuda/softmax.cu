// CUDA fused scaled_masked_softmax, forward and backward: one block per row of Tk keys, in opmath,
// warp-shuffle block reductions. logits l = scale * scores with masked keys at -inf;
//   forward   y = exp(l - max) / sum exp(l - max); a row whose keys are all masked is all zeros
//   backward  gs = scale * y * (g - sum(g y)), y recomputed from the inputs (zeros where masked,
//             so fully masked rows get zero gradients)
// The mask (bool, broadcastable to scores) is viewed expanded to the scores' shape and read
// through its own row strides (zero along broadcast dims: never materialized), made contiguous
// only when its last stride is not 1. 16-byte packs of scores when Tk is a multiple of the pack
// and the pointers are aligned.
#include <ATen/Dispatch.h>
#include <ATen/Functions.h>

#include "ops/cuda/launch.cuh"
#include "ops/output.h"
#include "ops/scaled_masked_softmax/kernels.h"

namespace crossdev::ops::scaled_masked_softmax {
namespace {

using cuda::Pack;

constexpr int kMaxDims = 8;

// Element offset of a row of the (expanded) mask: the row index decomposed over the scores'
// leading dims, times the mask's strides.
struct MaskRows {
  int dims = 0;
  std::int64_t sizes[kMaxDims] = {};
  std::int64_t strides[kMaxDims] = {};
  __device__ __forceinline__ std::int64_t offset(std::int64_t r) const {
    std::int64_t off = 0;
    for (int k = dims - 1; k >= 0; --k) {
      off += (r % sizes[k]) * strides[k];
      r /= sizes[k];
    }
    return off;
  }
};

template <int VEC, typename scalar_t>
__device__ __forceinline__ void logits_at(const scalar_t* row, const bool* mrow, std::int64_t j,
                                          at::opmath_type<scalar_t> scale, at::opmath_type<scalar_t> (&l)[VEC]) {
  using opmath_t = at::opmath_type<scalar_t>;
  const auto v = cuda::load_pack<VEC>(row + j * VEC);
#pragma unroll
  for (int e = 0; e < VEC; ++e) {
    l[e] = (mrow != nullptr && mrow[j * VEC + e]) ? cuda::neg_infinity<opmath_t>()
                                                   : static_cast<opmath_t>(v.v[e]) * scale;
  }
}

// Row max and sum of exp(l - max); max == -inf means every key is masked.
template <int VEC, typename scalar_t>
__device__ __forceinline__ void row_stats(const scalar_t* row, const bool* mrow, std::int64_t packs,
                                          at::opmath_type<scalar_t> scale, at::opmath_type<scalar_t>& max,
                                          at::opmath_type<scalar_t>& sum) {
  using opmath_t = at::opmath_type<scalar_t>;
  const opmath_t neg_inf = cuda::neg_infinity<opmath_t>();
  opmath_t m = neg_inf;
  for (std::int64_t j = threadIdx.x; j < packs; j += blockDim.x) {
    opmath_t l[VEC];
    logits_at<VEC>(row, mrow, j, scale, l);
#pragma unroll
    for (int e = 0; e < VEC; ++e) m = l[e] > m ? l[e] : m;
  }
  max = cuda::block_reduce(m, cuda::MaxOp{}, neg_inf);
  opmath_t s = 0;
  if (max != neg_inf) {
    for (std::int64_t j = threadIdx.x; j < packs; j += blockDim.x) {
      opmath_t l[VEC];
      logits_at<VEC>(row, mrow, j, scale, l);
#pragma unroll
      for (int e = 0; e < VEC; ++e) s += cuda::device_exp(l[e] - max);
    }
  }
  sum = cuda::block_reduce(s, cuda::SumOp{}, opmath_t(0));
}

// The block's row (blockIdx.x): its scores, its mask row (null: no mask), the logits' scale, and
// the row's statistics (row_stats): max, and inv = 1 / sum exp(l - max), 0 when every key is masked.
template <int VEC, typename scalar_t>
struct SoftmaxRow {
  using opmath_t = at::opmath_type<scalar_t>;

  __device__ __forceinline__ SoftmaxRow(const scalar_t* scores, const bool* mask, const MaskRows& mask_rows,
                                        std::int64_t tk, double scale_d)
      : r(blockIdx.x),
        row(scores + r * tk),
        mrow(mask != nullptr ? mask + mask_rows.offset(r) : nullptr),
        scale(static_cast<opmath_t>(scale_d)),
        packs(tk / VEC) {
    opmath_t sum;
    row_stats<VEC>(row, mrow, packs, scale, max, sum);
    all_masked = max == cuda::neg_infinity<opmath_t>();
    inv = all_masked ? opmath_t(0) : opmath_t(1) / sum;
  }

  // The logits of pack j.
  __device__ __forceinline__ void logits(std::int64_t j, opmath_t (&l)[VEC]) const {
    logits_at<VEC>(row, mrow, j, scale, l);
  }

  const std::int64_t r;
  const scalar_t* const row;
  const bool* const mrow;
  const opmath_t scale;
  const std::int64_t packs;
  opmath_t max;
  bool all_masked;
  opmath_t inv;
};

template <int VEC, typename scalar_t>
__global__ void softmax_kernel(const scalar_t* __restrict__ scores, const bool* __restrict__ mask, MaskRows mask_rows,
                               scalar_t* __restrict__ out, std::int64_t tk, double scale_d) {
  using opmath_t = at::opmath_type<scalar_t>;
  const SoftmaxRow<VEC, scalar_t> s(scores, mask, mask_rows, tk, scale_d);
  scalar_t* dst = out + s.r * tk;
  for (std::int64_t j = threadIdx.x; j < s.packs; j += blockDim.x) {
    opmath_t l[VEC];
    s.logits(j, l);
    Pack<scalar_t, VEC> o;
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      o.v[e] = static_cast<scalar_t>(s.all_masked ? opmath_t(0) : cuda::device_exp(l[e] - s.max) * s.inv);
    }
    cuda::store_pack<VEC>(dst + j * VEC, o);
  }
}

template <int VEC, typename scalar_t>
__global__ void softmax_backward_kernel(const scalar_t* __restrict__ grad, const scalar_t* __restrict__ scores,
                                        const bool* __restrict__ mask, MaskRows mask_rows,
                                        scalar_t* __restrict__ grad_scores, std::int64_t tk, double scale_d) {
  using opmath_t = at::opmath_type<scalar_t>;
  const SoftmaxRow<VEC, scalar_t> s(scores, mask, mask_rows, tk, scale_d);
  const scalar_t* g = grad + s.r * tk;
  scalar_t* dst = grad_scores + s.r * tk;
  opmath_t dot = 0;
  if (!s.all_masked) {
    for (std::int64_t j = threadIdx.x; j < s.packs; j += blockDim.x) {
      opmath_t l[VEC];
      s.logits(j, l);
      const auto gv = cuda::load_pack<VEC>(g + j * VEC);
#pragma unroll
      for (int e = 0; e < VEC; ++e) dot += static_cast<opmath_t>(gv.v[e]) * (cuda::device_exp(l[e] - s.max) * s.inv);
    }
  }
  dot = cuda::block_reduce(dot, cuda::SumOp{}, opmath_t(0));
  for (std::int64_t j = threadIdx.x; j < s.packs; j += blockDim.x) {
    opmath_t l[VEC];
    s.logits(j, l);
    const auto gv = cuda::load_pack<VEC>(g + j * VEC);
    Pack<scalar_t, VEC> o;
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      const opmath_t y = s.all_masked ? opmath_t(0) : cuda::device_exp(l[e] - s.max) * s.inv;
      o.v[e] = static_cast<scalar_t>(s.scale * y * (static_cast<opmath_t>(gv.v[e]) - dot));
    }
    cuda::store_pack<VEC>(dst + j * VEC, o);
  }
}

// The mask to read (or undefined) and its row indexer, for scores of `sizes`.
at::Tensor prepare_mask(const at::Tensor& mask_in, at::IntArrayRef sizes, MaskRows& rows) {
  if (!mask_in.defined()) return mask_in;
  at::Tensor mask = mask_in.expand(sizes);
  const int leading = static_cast<int>(sizes.size()) - 1;
  if (mask.stride(-1) != 1 || leading > kMaxDims) mask = mask.contiguous();
  if (leading > kMaxDims) {  // contiguous: row r starts at r * Tk
    rows.dims = 1;
    rows.sizes[0] = mask.numel() / sizes.back();
    rows.strides[0] = sizes.back();
    return mask;
  }
  rows.dims = leading;
  for (int k = 0; k < leading; ++k) {
    rows.sizes[k] = sizes[k];
    rows.strides[k] = mask.stride(k);
  }
  return mask;
}

template <bool kBackward>
at::Tensor launch(const OpCall& call, const at::Tensor& grad_out) {
  const at::Tensor scores = call.tensor("scores").contiguous();
  const c10::cuda::CUDAGuard guard(scores.device());
  // The forward writes into the .out overload's output when it has one (ops/output.h).
  at::Tensor out = kBackward ? at::empty(scores.sizes(), scores.options()) : output_for(call, scores.sizes(), scores.options());
  if (scores.numel() == 0) return out;
  const std::int64_t tk = scores.size(-1);
  const std::int64_t rows = scores.numel() / tk;
  TORCH_CHECK(rows <= 2147483647, "scaled_masked_softmax cuda: too many rows for a 1-D grid");
  MaskRows mask_rows;
  const at::Tensor mask = prepare_mask(call.tensor("mask"), scores.sizes(), mask_rows);
  const at::Tensor g = kBackward ? grad_out.contiguous() : at::Tensor();
  const double scale = call.scalar("scale", 1.0);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, scores.scalar_type(), "scaled_masked_softmax_cuda", [&] {
    const scalar_t* sp = scores.const_data_ptr<scalar_t>();
    const bool* mp = mask.defined() ? mask.const_data_ptr<bool>() : nullptr;
    const scalar_t* gp = kBackward ? g.const_data_ptr<scalar_t>() : nullptr;
    scalar_t* op = out.mutable_data_ptr<scalar_t>();
    if (kBackward) {
      cuda::launch_rows<scalar_t>(softmax_backward_kernel<cuda::kVec<scalar_t>, scalar_t>,
                                  softmax_backward_kernel<1, scalar_t>, rows, tk, {sp, gp, op}, gp, sp, mp, mask_rows,
                                  op, tk, scale);
    } else {
      cuda::launch_rows<scalar_t>(softmax_kernel<cuda::kVec<scalar_t>, scalar_t>, softmax_kernel<1, scalar_t>, rows,
                                  tk, {sp, gp, op}, sp, mp, mask_rows, op, tk, scale);
    }
  });
  return out;
}

}  // namespace

at::Tensor fused_cuda(const OpCall& call) { return launch<false>(call, at::Tensor()); }

std::vector<at::Tensor> fused_backward_cuda(const OpCall& call, const at::Tensor& grad_out) {
  return {launch<true>(call, grad_out), at::Tensor()};
}

}  // namespace crossdev::ops::scaled_masked_softmax
