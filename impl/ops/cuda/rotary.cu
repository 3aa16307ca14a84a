// CUDA fused rotary (LLaMA half rotation), forward and backward, as the CPU kernel: per row
// (b, t, h) of Dh = 2 h elements, thread j handles a pack of VEC elements i of the low half and
// the same i of the high half:
//   forward   out[i] = x[i] c[i] - x[i+h] s[i]        out[i+h] = x[i+h] c[i+h] + x[i] s[i+h]
//   backward  gx[i]  = g[i] c[i] + g[i+h] s[i+h]      gx[i+h]  = g[i+h] c[i+h] - g[i] s[i]
// cos/sin rows [T|1, Dh] are read through a row stride (0 when shared), never expanded. 16-byte
// packs when h is a multiple of the pack and every pointer is aligned. cos's and sin's gradients
// are ATen reductions (table_gradients, rotary/fallback.cpp), as on the CPU.
#include <ATen/Dispatch.h>
#include <ATen/Functions.h>

#include "ops/cuda/launch.cuh"
#include "ops/output.h"
#include "ops/rotary/kernels.h"

namespace crossdev::ops::rotary {
namespace {

using cuda::Pack;

template <int VEC, bool kTranspose, typename scalar_t>
__global__ void rotary_kernel(const scalar_t* __restrict__ x, const scalar_t* __restrict__ cos,
                              const scalar_t* __restrict__ sin, scalar_t* __restrict__ out, std::int64_t packs,
                              std::int64_t t_steps, std::int64_t heads, std::int64_t half,
                              std::int64_t table_stride) {
  using opmath_t = at::opmath_type<scalar_t>;
  const std::int64_t packs_per_half = half / VEC;
  const std::int64_t stride = static_cast<std::int64_t>(blockDim.x) * gridDim.x;
  const opmath_t sign = kTranspose ? opmath_t(1) : opmath_t(-1);
  for (std::int64_t j = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; j < packs; j += stride) {
    const std::int64_t r = j / packs_per_half;
    const std::int64_t i = (j % packs_per_half) * VEC;
    const std::int64_t t = (r / heads) % t_steps;
    const scalar_t* row = x + r * 2 * half;
    const scalar_t* c = cos + t * table_stride;
    const scalar_t* s = sin + t * table_stride;
    // Sine factor of the partner element: the destination's index forward, the partner's backward.
    const scalar_t* s_for_lo = kTranspose ? s + half : s;
    const scalar_t* s_for_hi = kTranspose ? s : s + half;
    const auto lo = cuda::load_pack<VEC>(row + i);
    const auto hi = cuda::load_pack<VEC>(row + half + i);
    const auto c_lo = cuda::load_pack<VEC>(c + i);
    const auto c_hi = cuda::load_pack<VEC>(c + half + i);
    const auto s_lo = cuda::load_pack<VEC>(s_for_lo + i);
    const auto s_hi = cuda::load_pack<VEC>(s_for_hi + i);
    Pack<scalar_t, VEC> o_lo, o_hi;
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      const opmath_t l = static_cast<opmath_t>(lo.v[e]);
      const opmath_t h = static_cast<opmath_t>(hi.v[e]);
      o_lo.v[e] = static_cast<scalar_t>(l * static_cast<opmath_t>(c_lo.v[e]) + sign * h * static_cast<opmath_t>(s_lo.v[e]));
      o_hi.v[e] = static_cast<scalar_t>(h * static_cast<opmath_t>(c_hi.v[e]) - sign * l * static_cast<opmath_t>(s_hi.v[e]));
    }
    cuda::store_pack<VEC>(out + r * 2 * half + i, o_lo);
    cuda::store_pack<VEC>(out + r * 2 * half + half + i, o_hi);
  }
}

template <bool kTranspose>
at::Tensor rotate(const at::Tensor& input, const at::Tensor& cos_in, const at::Tensor& sin_in,
                  const OpCall* call_with_out) {
  const at::Tensor x = input.contiguous();
  const at::Tensor cos = cos_in.contiguous();
  const at::Tensor sin = sin_in.contiguous();
  const c10::cuda::CUDAGuard guard(x.device());
  // The forward passes its call: the .out overload's output, when there is one (ops/output.h).
  at::Tensor out = call_with_out != nullptr ? output_for(*call_with_out, x.sizes(), x.options())
                                            : at::empty(x.sizes(), x.options());
  if (x.numel() == 0) return out;
  const std::int64_t t_steps = x.size(1);
  const std::int64_t heads = x.size(2);
  const std::int64_t half = x.size(3) / 2;
  const std::int64_t rows = x.size(0) * t_steps * heads;
  const std::int64_t table_stride = cos.size(0) == 1 ? 0 : x.size(3);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "rotary_fused_cuda", [&] {
    const scalar_t* xp = x.const_data_ptr<scalar_t>();
    const scalar_t* cp = cos.const_data_ptr<scalar_t>();
    const scalar_t* sp = sin.const_data_ptr<scalar_t>();
    scalar_t* op = out.mutable_data_ptr<scalar_t>();
    const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    constexpr int V = cuda::kVec<scalar_t>;
    const bool vectorized = half % V == 0 && cuda::aligned16(xp) && cuda::aligned16(cp) && cuda::aligned16(sp) &&
                            cuda::aligned16(op);
    if (vectorized) {
      const std::int64_t packs = rows * (half / V);
      rotary_kernel<V, kTranspose><<<cuda::blocks_for(packs), cuda::kThreads, 0, stream>>>(
          xp, cp, sp, op, packs, t_steps, heads, half, table_stride);
    } else {
      const std::int64_t packs = rows * half;
      rotary_kernel<1, kTranspose><<<cuda::blocks_for(packs), cuda::kThreads, 0, stream>>>(
          xp, cp, sp, op, packs, t_steps, heads, half, table_stride);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return out;
}

}  // namespace

at::Tensor fused_cuda(const OpCall& call) {
  return rotate<false>(call.tensor("x"), call.tensor("cos"), call.tensor("sin"), &call);
}

std::vector<at::Tensor> fused_backward_cuda(const OpCall& call, const at::Tensor& grad_out) {
  std::vector<at::Tensor> tables = table_gradients(call, grad_out);
  return {rotate<true>(grad_out, call.tensor("cos"), call.tensor("sin"), nullptr), std::move(tables[0]),
          std::move(tables[1])};
}

}  // namespace crossdev::ops::rotary
