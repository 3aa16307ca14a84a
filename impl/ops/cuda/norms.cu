// CUDA fused row norms: rms_norm and layer_norm_modulate, forward and backward. One block per row
// (threads_for_row), warp-shuffle block reductions in opmath, 16-byte packs when D is a multiple
// of the pack and every pointer is aligned. The backward kernels also write each row's
// statistics (opmath), from which column_sums() forms the parameter gradients.
//   rms_norm            r = 1 / sqrt(mean(x^2) + eps), y = x r w
//                       gx = r (g w) - x r^3 mean(g w x),  gw = sum_rows g x r
//   layer_norm_modulate n = (x - mean) rstd, y = n (1 + scale[b]) + shift[b], gn = g (1 + scale[b])
//                       gx = rstd (gn - mean(gn) - n mean(gn n)),
//                       gshift[b] = sum_t g, gscale[b] = sum_t g n
#include <ATen/Dispatch.h>
#include <ATen/Functions.h>

#include "ops/cuda/column_sums.cuh"
#include "ops/cuda/launch.cuh"
#include "ops/layer_norm_modulate/kernels.h"
#include "ops/output.h"
#include "ops/rms_norm/kernels.h"

namespace crossdev::ops {
namespace {

using cuda::Pack;

// ---- rms_norm --------------------------------------------------------------------------------

template <int VEC, typename scalar_t>
__global__ void rms_norm_kernel(const scalar_t* __restrict__ x, const scalar_t* __restrict__ weight,
                                scalar_t* __restrict__ out, std::int64_t d, double eps) {
  using opmath_t = at::opmath_type<scalar_t>;
  const scalar_t* row = x + blockIdx.x * d;
  scalar_t* dst = out + blockIdx.x * d;
  const std::int64_t packs = d / VEC;
  opmath_t sum = 0;
  for (std::int64_t j = threadIdx.x; j < packs; j += blockDim.x) {
    const auto v = cuda::load_pack<VEC>(row + j * VEC);
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      const opmath_t f = static_cast<opmath_t>(v.v[e]);
      sum += f * f;
    }
  }
  sum = cuda::block_reduce(sum, cuda::SumOp{}, opmath_t(0));
  const opmath_t inv_rms = cuda::device_inv_sqrt(sum / static_cast<opmath_t>(d) + static_cast<opmath_t>(eps));
  for (std::int64_t j = threadIdx.x; j < packs; j += blockDim.x) {
    const auto v = cuda::load_pack<VEC>(row + j * VEC);
    const auto w = cuda::load_pack<VEC>(weight + j * VEC);
    Pack<scalar_t, VEC> o;
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      o.v[e] = static_cast<scalar_t>(static_cast<opmath_t>(v.v[e]) * inv_rms * static_cast<opmath_t>(w.v[e]));
    }
    cuda::store_pack<VEC>(dst + j * VEC, o);
  }
}

template <int VEC, typename scalar_t>
__global__ void rms_norm_backward_kernel(const scalar_t* __restrict__ grad, const scalar_t* __restrict__ x,
                                         const scalar_t* __restrict__ weight, scalar_t* __restrict__ grad_x,
                                         at::opmath_type<scalar_t>* __restrict__ inv_rms_out, std::int64_t d,
                                         double eps) {
  using opmath_t = at::opmath_type<scalar_t>;
  const std::int64_t offset = blockIdx.x * d;
  const std::int64_t packs = d / VEC;
  opmath_t sum_sq = 0, sum_gwx = 0;
  for (std::int64_t j = threadIdx.x; j < packs; j += blockDim.x) {
    const auto v = cuda::load_pack<VEC>(x + offset + j * VEC);
    const auto g = cuda::load_pack<VEC>(grad + offset + j * VEC);
    const auto w = cuda::load_pack<VEC>(weight + j * VEC);
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      const opmath_t f = static_cast<opmath_t>(v.v[e]);
      sum_sq += f * f;
      sum_gwx += static_cast<opmath_t>(g.v[e]) * static_cast<opmath_t>(w.v[e]) * f;
    }
  }
  sum_sq = cuda::block_reduce(sum_sq, cuda::SumOp{}, opmath_t(0));
  sum_gwx = cuda::block_reduce(sum_gwx, cuda::SumOp{}, opmath_t(0));
  const opmath_t inv_d = opmath_t(1) / static_cast<opmath_t>(d);
  const opmath_t r = cuda::device_inv_sqrt(sum_sq * inv_d + static_cast<opmath_t>(eps));
  const opmath_t c = r * r * r * sum_gwx * inv_d;
  if (threadIdx.x == 0) inv_rms_out[blockIdx.x] = r;
  for (std::int64_t j = threadIdx.x; j < packs; j += blockDim.x) {
    const auto v = cuda::load_pack<VEC>(x + offset + j * VEC);
    const auto g = cuda::load_pack<VEC>(grad + offset + j * VEC);
    const auto w = cuda::load_pack<VEC>(weight + j * VEC);
    Pack<scalar_t, VEC> o;
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      const opmath_t gw = static_cast<opmath_t>(g.v[e]) * static_cast<opmath_t>(w.v[e]);
      o.v[e] = static_cast<scalar_t>(r * gw - static_cast<opmath_t>(v.v[e]) * c);
    }
    cuda::store_pack<VEC>(grad_x + offset + j * VEC, o);
  }
}

// ---- layer_norm_modulate ---------------------------------------------------------------------

// Two-pass row statistics (mean, then the centered sum of squares), as the CPU kernel.
template <int VEC, typename scalar_t>
__device__ __forceinline__ void row_moments(const scalar_t* row, std::int64_t d, double eps,
                                            at::opmath_type<scalar_t>& mean, at::opmath_type<scalar_t>& rstd) {
  using opmath_t = at::opmath_type<scalar_t>;
  const std::int64_t packs = d / VEC;
  opmath_t sum = 0;
  for (std::int64_t j = threadIdx.x; j < packs; j += blockDim.x) {
    const auto v = cuda::load_pack<VEC>(row + j * VEC);
#pragma unroll
    for (int e = 0; e < VEC; ++e) sum += static_cast<opmath_t>(v.v[e]);
  }
  mean = cuda::block_reduce(sum, cuda::SumOp{}, opmath_t(0)) / static_cast<opmath_t>(d);
  opmath_t sum_sq = 0;
  for (std::int64_t j = threadIdx.x; j < packs; j += blockDim.x) {
    const auto v = cuda::load_pack<VEC>(row + j * VEC);
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      const opmath_t c = static_cast<opmath_t>(v.v[e]) - mean;
      sum_sq += c * c;
    }
  }
  sum_sq = cuda::block_reduce(sum_sq, cuda::SumOp{}, opmath_t(0));
  rstd = cuda::device_inv_sqrt(sum_sq / static_cast<opmath_t>(d) + static_cast<opmath_t>(eps));
}

// The block's row r = (b, t) of x [B, T, D] (blockIdx.x), row b of scale, and the row's mean and
// rstd (row_moments).
template <int VEC, typename scalar_t>
struct ModulatedRow {
  using opmath_t = at::opmath_type<scalar_t>;

  __device__ __forceinline__ ModulatedRow(const scalar_t* x, const scalar_t* scale, std::int64_t t_steps, std::int64_t d,
                                          std::int64_t scale_batch_stride, double eps)
      : r(blockIdx.x), b(r / t_steps), row(x + r * d), sc(scale + b * scale_batch_stride) {
    row_moments<VEC>(row, d, eps, mean, rstd);
  }

  const std::int64_t r;
  const std::int64_t b;
  const scalar_t* const row;
  const scalar_t* const sc;
  opmath_t mean, rstd;
};

template <int VEC, typename scalar_t>
__global__ void layer_norm_modulate_kernel(const scalar_t* __restrict__ x, const scalar_t* __restrict__ shift,
                                           const scalar_t* __restrict__ scale, scalar_t* __restrict__ out,
                                           std::int64_t t_steps, std::int64_t d, std::int64_t shift_batch_stride,
                                           std::int64_t scale_batch_stride, double eps) {
  using opmath_t = at::opmath_type<scalar_t>;
  const ModulatedRow<VEC, scalar_t> s(x, scale, t_steps, d, scale_batch_stride, eps);
  const scalar_t* sh = shift + s.b * shift_batch_stride;
  scalar_t* dst = out + s.r * d;
  for (std::int64_t j = threadIdx.x; j < d / VEC; j += blockDim.x) {
    const auto v = cuda::load_pack<VEC>(s.row + j * VEC);
    const auto shv = cuda::load_pack<VEC>(sh + j * VEC);
    const auto scv = cuda::load_pack<VEC>(s.sc + j * VEC);
    Pack<scalar_t, VEC> o;
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      const opmath_t normed = (static_cast<opmath_t>(v.v[e]) - s.mean) * s.rstd;
      o.v[e] = static_cast<scalar_t>(normed * (opmath_t(1) + static_cast<opmath_t>(scv.v[e])) +
                                     static_cast<opmath_t>(shv.v[e]));
    }
    cuda::store_pack<VEC>(dst + j * VEC, o);
  }
}

template <int VEC, typename scalar_t>
__global__ void layer_norm_modulate_backward_kernel(const scalar_t* __restrict__ grad, const scalar_t* __restrict__ x,
                                                    const scalar_t* __restrict__ scale, scalar_t* __restrict__ grad_x,
                                                    at::opmath_type<scalar_t>* __restrict__ mean_out,
                                                    at::opmath_type<scalar_t>* __restrict__ rstd_out,
                                                    std::int64_t t_steps, std::int64_t d,
                                                    std::int64_t scale_batch_stride, double eps) {
  using opmath_t = at::opmath_type<scalar_t>;
  const ModulatedRow<VEC, scalar_t> s(x, scale, t_steps, d, scale_batch_stride, eps);
  const scalar_t* g = grad + s.r * d;
  const std::int64_t packs = d / VEC;
  opmath_t sum_gn = 0, sum_gn_n = 0;
  for (std::int64_t j = threadIdx.x; j < packs; j += blockDim.x) {
    const auto v = cuda::load_pack<VEC>(s.row + j * VEC);
    const auto gv = cuda::load_pack<VEC>(g + j * VEC);
    const auto scv = cuda::load_pack<VEC>(s.sc + j * VEC);
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      const opmath_t gn = static_cast<opmath_t>(gv.v[e]) * (opmath_t(1) + static_cast<opmath_t>(scv.v[e]));
      sum_gn += gn;
      sum_gn_n += gn * (static_cast<opmath_t>(v.v[e]) - s.mean) * s.rstd;
    }
  }
  sum_gn = cuda::block_reduce(sum_gn, cuda::SumOp{}, opmath_t(0));
  sum_gn_n = cuda::block_reduce(sum_gn_n, cuda::SumOp{}, opmath_t(0));
  const opmath_t inv_d = opmath_t(1) / static_cast<opmath_t>(d);
  const opmath_t mean_gn = sum_gn * inv_d, mean_gn_n = sum_gn_n * inv_d;
  if (threadIdx.x == 0) {
    mean_out[s.r] = s.mean;
    rstd_out[s.r] = s.rstd;
  }
  for (std::int64_t j = threadIdx.x; j < packs; j += blockDim.x) {
    const auto v = cuda::load_pack<VEC>(s.row + j * VEC);
    const auto gv = cuda::load_pack<VEC>(g + j * VEC);
    const auto scv = cuda::load_pack<VEC>(s.sc + j * VEC);
    Pack<scalar_t, VEC> o;
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      const opmath_t gn = static_cast<opmath_t>(gv.v[e]) * (opmath_t(1) + static_cast<opmath_t>(scv.v[e]));
      const opmath_t n = (static_cast<opmath_t>(v.v[e]) - s.mean) * s.rstd;
      o.v[e] = static_cast<scalar_t>(s.rstd * (gn - mean_gn - n * mean_gn_n));
    }
    cuda::store_pack<VEC>(grad_x + s.r * d + j * VEC, o);
  }
}

std::int64_t checked_rows(std::int64_t rows, const char* what) {
  TORCH_CHECK(rows <= 2147483647, what, ": too many rows for a 1-D grid");
  return rows;
}

}  // namespace

at::Tensor rms_norm::fused_cuda(const OpCall& call) {
  const at::Tensor x = call.tensor("x").contiguous();
  const at::Tensor weight = call.tensor("weight").contiguous();
  const c10::cuda::CUDAGuard guard(x.device());
  at::Tensor out = output_for(call, x.sizes(), x.options());
  const std::int64_t d = x.size(-1);
  const std::int64_t rows = checked_rows(d == 0 ? 0 : x.numel() / d, "rms_norm fused_cuda");
  if (rows == 0) return out;
  const double eps = call.scalar("eps", 1e-6);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "rms_norm_fused_cuda", [&] {
    const scalar_t* xp = x.const_data_ptr<scalar_t>();
    const scalar_t* wp = weight.const_data_ptr<scalar_t>();
    scalar_t* op = out.mutable_data_ptr<scalar_t>();
    cuda::launch_rows<scalar_t>(rms_norm_kernel<cuda::kVec<scalar_t>, scalar_t>, rms_norm_kernel<1, scalar_t>, rows, d,
                                {xp, wp, op}, xp, wp, op, d, eps);
  });
  return out;
}

std::vector<at::Tensor> rms_norm::fused_backward_cuda(const OpCall& call, const at::Tensor& grad_out) {
  const at::Tensor x = call.tensor("x").contiguous();
  const at::Tensor weight = call.tensor("weight").contiguous();
  const at::Tensor g = grad_out.contiguous();
  const c10::cuda::CUDAGuard guard(x.device());
  at::Tensor grad_x = at::empty(x.sizes(), x.options());
  at::Tensor grad_weight;
  const std::int64_t d = x.size(-1);
  const std::int64_t rows = checked_rows(d == 0 ? 0 : x.numel() / d, "rms_norm backward_cuda");
  const double eps = call.scalar("eps", 1e-6);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "rms_norm_backward_cuda", [&] {
    using opmath_t = at::opmath_type<scalar_t>;
    at::Tensor inv_rms = at::empty({rows}, x.options().dtype(c10::CppTypeToScalarType<opmath_t>::value));
    if (rows > 0) {
      const scalar_t* gp = g.const_data_ptr<scalar_t>();
      const scalar_t* xp = x.const_data_ptr<scalar_t>();
      const scalar_t* wp = weight.const_data_ptr<scalar_t>();
      scalar_t* gxp = grad_x.mutable_data_ptr<scalar_t>();
      opmath_t* rp = inv_rms.mutable_data_ptr<opmath_t>();
      cuda::launch_rows<scalar_t>(rms_norm_backward_kernel<cuda::kVec<scalar_t>, scalar_t>,
                                  rms_norm_backward_kernel<1, scalar_t>, rows, d, {gp, xp, wp, gxp}, gp, xp, wp, gxp,
                                  rp, d, eps);
    }
    // grad_weight[k] = sum_rows g x r: one group of all rows.
    auto sums = cuda::column_sums<scalar_t>(g, x, at::Tensor(), inv_rms, 1, d, false);
    grad_weight = sums.second.reshape({d}).to(x.scalar_type());
  });
  return {grad_x, grad_weight};
}

at::Tensor layer_norm_modulate::fused_cuda(const OpCall& call) {
  const at::Tensor x = call.tensor("x").contiguous();
  const at::Tensor shift = call.tensor("shift").contiguous();
  const at::Tensor scale = call.tensor("scale").contiguous();
  const c10::cuda::CUDAGuard guard(x.device());
  at::Tensor out = output_for(call, x.sizes(), x.options());
  const std::int64_t t_steps = x.size(1);
  const std::int64_t d = x.size(2);
  const std::int64_t rows = checked_rows(d == 0 ? 0 : x.size(0) * t_steps, "layer_norm_modulate fused_cuda");
  if (rows == 0) return out;
  const double eps = call.scalar("eps", 1e-6);
  const std::int64_t ss = shift.size(0) == 1 ? 0 : d, cs = scale.size(0) == 1 ? 0 : d;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "layer_norm_modulate_fused_cuda", [&] {
    const scalar_t* xp = x.const_data_ptr<scalar_t>();
    const scalar_t* shp = shift.const_data_ptr<scalar_t>();
    const scalar_t* scp = scale.const_data_ptr<scalar_t>();
    scalar_t* op = out.mutable_data_ptr<scalar_t>();
    cuda::launch_rows<scalar_t>(layer_norm_modulate_kernel<cuda::kVec<scalar_t>, scalar_t>,
                                layer_norm_modulate_kernel<1, scalar_t>, rows, d, {xp, shp, scp, op}, xp, shp, scp, op,
                                t_steps, d, ss, cs, eps);
  });
  return out;
}

std::vector<at::Tensor> layer_norm_modulate::fused_backward_cuda(const OpCall& call, const at::Tensor& grad_out) {
  cuda::ModulatedBackward grads(call, grad_out);
  const at::Tensor& x = grads.x;
  const std::int64_t t_steps = x.size(1);
  const std::int64_t d = x.size(2);
  const std::int64_t rows = checked_rows(d == 0 ? 0 : x.size(0) * t_steps, "layer_norm_modulate backward_cuda");
  const double eps = call.scalar("eps", 1e-6);
  const std::int64_t cs = grads.scale.size(0) == 1 ? 0 : d;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "layer_norm_modulate_backward_cuda", [&] {
    using opmath_t = at::opmath_type<scalar_t>;
    const auto stat_options = x.options().dtype(c10::CppTypeToScalarType<opmath_t>::value);
    at::Tensor mean = at::empty({rows}, stat_options);
    at::Tensor rstd = at::empty({rows}, stat_options);
    if (rows > 0) {
      const scalar_t* gp = grads.g.const_data_ptr<scalar_t>();
      const scalar_t* xp = x.const_data_ptr<scalar_t>();
      const scalar_t* scp = grads.scale.const_data_ptr<scalar_t>();
      scalar_t* gxp = grads.grad_x.mutable_data_ptr<scalar_t>();
      cuda::launch_rows<scalar_t>(layer_norm_modulate_backward_kernel<cuda::kVec<scalar_t>, scalar_t>,
                                  layer_norm_modulate_backward_kernel<1, scalar_t>, rows, d, {gp, xp, scp, gxp}, gp, xp,
                                  scp, gxp, mean.mutable_data_ptr<opmath_t>(), rstd.mutable_data_ptr<opmath_t>(),
                                  t_steps, d, cs, eps);
    }
    grads.parameter_gradients<scalar_t>(mean, rstd);
  });
  return grads.gradients();
}

}  // namespace crossdev::ops
