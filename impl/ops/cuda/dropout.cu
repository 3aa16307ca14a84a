// CUDA fused bias_dropout_add_scale, forward and backward:
//   out = s * keep(i) * (x + bias) + residual,   keep(i) = kept(i) ? 1 / (1 - p) : 0
// with kept(i) the portable rule (launch.cuh: dropout_keep, bit for bit the CPU's
// uniform01(dropout_key(seed), offset + i) >= p), i the row-major index in the output shape,
// (seed, offset) the stream the call draws from its CUDA generator (draw_mask_stream, kernels.h:
// the generator's seed and Philox offset, which advances as philox_cuda_state does), s the scale
// tensor or the scalar "scale_value". The mask is never materialized.
// Operands index the contiguous output by one of: full (same shape, contiguous), row (a [..., D]
// tensor with every other dim 1: element i % D), scalar (one element). Any other broadcast is
// materialized once (expand + contiguous). 16-byte packs when every pointer is aligned and, with a
// row operand, D is a multiple of the pack.
// Backward: gv = g s keep, gs = g keep (x + bias); grad_x / grad_bias = gv summed to their shapes,
// grad_scale = gs summed, grad_residual = g summed (sums in opmath with at::sum_to, rounded once).
#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>
#include <ATen/Functions.h>

#include "ops/bias_dropout_add_scale/kernels.h"
#include "ops/cuda/launch.cuh"
#include "ops/output.h"
#include "ops/portable_random.h"

namespace crossdev::ops::bias_dropout_add_scale {
namespace {

using cuda::Pack;

enum Mode : int { kAbsent = 0, kFull = 1, kRow = 2, kScalar = 3 };

template <typename scalar_t>
struct Operand {
  const scalar_t* p = nullptr;
  int mode = kAbsent;
};

template <int VEC, typename scalar_t>
__device__ __forceinline__ void load_operand(const Operand<scalar_t>& op, std::int64_t i, std::int64_t d,
                                             at::opmath_type<scalar_t> (&v)[VEC]) {
  using opmath_t = at::opmath_type<scalar_t>;
  if (op.mode == kScalar) {
    const opmath_t s = static_cast<opmath_t>(op.p[0]);
#pragma unroll
    for (int e = 0; e < VEC; ++e) v[e] = s;
    return;
  }
  const auto pack = cuda::load_pack<VEC>(op.p + (op.mode == kRow ? i % d : i));
#pragma unroll
  for (int e = 0; e < VEC; ++e) v[e] = static_cast<opmath_t>(pack.v[e]);
}

struct Dropout {
  bool active = false;
  std::uint64_t key = 0;
  std::uint64_t offset = 0;  // the stream's first counter: element i uses offset + i
  std::uint64_t threshold = 0;
  double survivor = 1.0;
};

template <int VEC, typename scalar_t>
__device__ __forceinline__ void keep_factors(const Dropout& dropout, std::int64_t i,
                                             at::opmath_type<scalar_t> (&k)[VEC]) {
  using opmath_t = at::opmath_type<scalar_t>;
  const opmath_t survivor = static_cast<opmath_t>(dropout.survivor);
#pragma unroll
  for (int e = 0; e < VEC; ++e) {
    k[e] = !dropout.active ? opmath_t(1)
           : cuda::dropout_keep(dropout.key, dropout.offset + static_cast<std::uint64_t>(i + e), dropout.threshold) ? survivor
                                                                                                 : opmath_t(0);
  }
}

// Elements [i, i + VEC) of the output; VEC = 1 for the unaligned path and the tail.
template <int VEC, typename scalar_t>
__device__ __forceinline__ void forward_at(std::int64_t i, scalar_t* out, const Operand<scalar_t>& x,
                                           const Operand<scalar_t>& bias, const Operand<scalar_t>& scale,
                                           const Operand<scalar_t>& residual, std::int64_t d, const Dropout& dropout,
                                           double scalar_scale) {
  using opmath_t = at::opmath_type<scalar_t>;
  opmath_t v[VEC], t[VEC], k[VEC];
  load_operand<VEC>(x, i, d, v);
  if (bias.mode != kAbsent) {
    load_operand<VEC>(bias, i, d, t);
#pragma unroll
    for (int e = 0; e < VEC; ++e) v[e] += t[e];
  }
  if (dropout.active) {
    keep_factors<VEC, scalar_t>(dropout, i, k);
#pragma unroll
    for (int e = 0; e < VEC; ++e) v[e] *= k[e];
  }
  if (scale.mode != kAbsent) {
    load_operand<VEC>(scale, i, d, t);
  } else {
#pragma unroll
    for (int e = 0; e < VEC; ++e) t[e] = static_cast<opmath_t>(scalar_scale);
  }
#pragma unroll
  for (int e = 0; e < VEC; ++e) v[e] *= t[e];
  if (residual.mode != kAbsent) {
    load_operand<VEC>(residual, i, d, t);
#pragma unroll
    for (int e = 0; e < VEC; ++e) v[e] += t[e];
  }
  Pack<scalar_t, VEC> o;
#pragma unroll
  for (int e = 0; e < VEC; ++e) o.v[e] = static_cast<scalar_t>(v[e]);
  cuda::store_pack<VEC>(out + i, o);
}

template <int VEC, typename scalar_t>
__global__ void forward_kernel(scalar_t* __restrict__ out, Operand<scalar_t> x, Operand<scalar_t> bias,
                               Operand<scalar_t> scale, Operand<scalar_t> residual, std::int64_t n, std::int64_t d,
                               Dropout dropout, double scalar_scale) {
  const std::int64_t stride = static_cast<std::int64_t>(blockDim.x) * gridDim.x;
  const std::int64_t tid = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const std::int64_t packs = n / VEC;
  for (std::int64_t j = tid; j < packs; j += stride) {
    forward_at<VEC>(j * VEC, out, x, bias, scale, residual, d, dropout, scalar_scale);
  }
  for (std::int64_t i = packs * VEC + tid; i < n; i += stride) {
    forward_at<1>(i, out, x, bias, scale, residual, d, dropout, scalar_scale);
  }
}

// gx (storage dtype, when x has the output's shape), gv = g s keep and gs = g keep (x + bias)
// (opmath, for the sums over broadcast dims); null outputs are skipped.
template <int VEC, typename scalar_t>
__device__ __forceinline__ void backward_at(std::int64_t i, const scalar_t* grad, const Operand<scalar_t>& x,
                                            const Operand<scalar_t>& bias, const Operand<scalar_t>& scale,
                                            std::int64_t d, const Dropout& dropout, double scalar_scale,
                                            scalar_t* gx, at::opmath_type<scalar_t>* gv,
                                            at::opmath_type<scalar_t>* gs) {
  using opmath_t = at::opmath_type<scalar_t>;
  opmath_t g[VEC], s[VEC], k[VEC], t[VEC];
  load_operand<VEC>(Operand<scalar_t>{grad, kFull}, i, d, g);
  keep_factors<VEC, scalar_t>(dropout, i, k);
  if (scale.mode != kAbsent) {
    load_operand<VEC>(scale, i, d, s);
  } else {
#pragma unroll
    for (int e = 0; e < VEC; ++e) s[e] = static_cast<opmath_t>(scalar_scale);
  }
#pragma unroll
  for (int e = 0; e < VEC; ++e) {
    const opmath_t v = g[e] * s[e] * k[e];
    if (gx != nullptr) gx[i + e] = static_cast<scalar_t>(v);
    if (gv != nullptr) gv[i + e] = v;
  }
  if (gs != nullptr) {
    opmath_t v[VEC];
    load_operand<VEC>(x, i, d, v);
    if (bias.mode != kAbsent) {
      load_operand<VEC>(bias, i, d, t);
#pragma unroll
      for (int e = 0; e < VEC; ++e) v[e] += t[e];
    }
#pragma unroll
    for (int e = 0; e < VEC; ++e) gs[i + e] = g[e] * k[e] * v[e];
  }
}

template <int VEC, typename scalar_t>
__global__ void backward_kernel(const scalar_t* __restrict__ grad, Operand<scalar_t> x, Operand<scalar_t> bias,
                                Operand<scalar_t> scale, std::int64_t n, std::int64_t d, Dropout dropout,
                                double scalar_scale, scalar_t* gx, at::opmath_type<scalar_t>* gv,
                                at::opmath_type<scalar_t>* gs) {
  const std::int64_t stride = static_cast<std::int64_t>(blockDim.x) * gridDim.x;
  const std::int64_t tid = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const std::int64_t packs = n / VEC;
  for (std::int64_t j = tid; j < packs; j += stride) {
    backward_at<VEC>(j * VEC, grad, x, bias, scale, d, dropout, scalar_scale, gx, gv, gs);
  }
  for (std::int64_t i = packs * VEC + tid; i < n; i += stride) {
    backward_at<1>(i, grad, x, bias, scale, d, dropout, scalar_scale, gx, gv, gs);
  }
}

// ---- host side -------------------------------------------------------------------------------

struct Plan {
  std::vector<std::int64_t> shape;  // of x + bias: the output's
  std::int64_t n = 0, d = 1;
  at::Tensor x, bias, scale, residual;  // contiguous, materialized where needed
  int x_mode = kAbsent, bias_mode = kAbsent, scale_mode = kAbsent, residual_mode = kAbsent;
  Dropout dropout;
  double scalar_scale = 1.0;
};

// The tensor to read and how to index it, for an operand broadcast to `shape`.
int prepare(const at::Tensor& t, const std::vector<std::int64_t>& shape, std::int64_t d, at::Tensor& use) {
  if (!t.defined()) return kAbsent;
  if (t.sizes() == at::IntArrayRef(shape)) {
    use = t.contiguous();
    return kFull;
  }
  if (t.numel() == 1) {
    use = t.contiguous();
    return kScalar;
  }
  if (t.dim() >= 1 && !shape.empty() && t.size(-1) == d && t.numel() == d) {
    use = t.contiguous();
    return kRow;
  }
  use = t.expand(shape).contiguous();
  return kFull;
}

Plan make_plan(const OpCall& call) {
  Plan plan;
  const at::Tensor x = call.tensor("x");
  const at::Tensor bias = call.tensor("bias");
  plan.shape = bias.defined() ? at::infer_size(x.sizes(), bias.sizes()) : x.sizes().vec();
  plan.n = c10::multiply_integers(plan.shape);
  plan.d = plan.shape.empty() ? 1 : plan.shape.back();
  plan.x_mode = prepare(x, plan.shape, plan.d, plan.x);
  plan.bias_mode = prepare(bias, plan.shape, plan.d, plan.bias);
  plan.scale_mode = prepare(call.tensor("scale"), plan.shape, plan.d, plan.scale);
  plan.residual_mode = prepare(call.tensor("residual"), plan.shape, plan.d, plan.residual);
  const double p = call.scalar("p", 0.0);
  plan.dropout.active = dropout_active(call);
  if (plan.dropout.active) {
    const generator_stream::Stream stream = draw_mask_stream(call);  // once per forward / backward
    plan.dropout.key = portable_random::dropout_key(stream.seed);
    plan.dropout.offset = stream.offset;
    plan.dropout.threshold = cuda::dropout_threshold(p);
    plan.dropout.survivor = portable_random::dropout_survivor_scale(p);
  }
  plan.scalar_scale = call.scalar("scale_value", 1.0);
  return plan;
}

template <typename scalar_t>
Operand<scalar_t> operand(const at::Tensor& t, int mode) {
  return mode == kAbsent ? Operand<scalar_t>{} : Operand<scalar_t>{t.const_data_ptr<scalar_t>(), mode};
}

// Packs are possible when every pointer is aligned and row operands hold whole packs.
template <typename scalar_t>
bool packs_fit(const Plan& plan, std::initializer_list<const void*> outputs) {
  constexpr int V = cuda::kVec<scalar_t>;
  for (const void* p : outputs) {
    if (!cuda::aligned16(p)) return false;
  }
  const std::pair<const at::Tensor*, int> operands[] = {
      {&plan.x, plan.x_mode}, {&plan.bias, plan.bias_mode}, {&plan.scale, plan.scale_mode},
      {&plan.residual, plan.residual_mode}};
  for (const auto& [t, mode] : operands) {
    if (mode == kFull || mode == kRow) {
      if (!cuda::aligned16(t->const_data_ptr())) return false;
      if (mode == kRow && plan.d % V != 0) return false;
    }
  }
  return true;
}

}  // namespace

at::Tensor fused_cuda(const OpCall& call) {
  const c10::cuda::CUDAGuard guard(call.tensor("x").device());
  const Plan plan = make_plan(call);
  // Contiguous, so an element's offset is its row-major index: the mask counter.
  at::Tensor out = output_for(call, plan.shape, call.tensor("x").options());
  if (plan.n == 0) return out;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, out.scalar_type(), "bias_dropout_add_scale_fused_cuda", [&] {
    scalar_t* op = out.mutable_data_ptr<scalar_t>();
    const auto x = operand<scalar_t>(plan.x, plan.x_mode);
    const auto bias = operand<scalar_t>(plan.bias, plan.bias_mode);
    const auto scale = operand<scalar_t>(plan.scale, plan.scale_mode);
    const auto residual = operand<scalar_t>(plan.residual, plan.residual_mode);
    const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    constexpr int V = cuda::kVec<scalar_t>;
    if (packs_fit<scalar_t>(plan, {op})) {
      forward_kernel<V><<<cuda::blocks_for((plan.n + V - 1) / V), cuda::kThreads, 0, stream>>>(
          op, x, bias, scale, residual, plan.n, plan.d, plan.dropout, plan.scalar_scale);
    } else {
      forward_kernel<1><<<cuda::blocks_for(plan.n), cuda::kThreads, 0, stream>>>(
          op, x, bias, scale, residual, plan.n, plan.d, plan.dropout, plan.scalar_scale);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return out;
}

std::vector<at::Tensor> fused_backward_cuda(const OpCall& call, const at::Tensor& grad_out) {
  const at::Tensor x_in = call.tensor("x");
  const at::Tensor bias_in = call.tensor("bias");
  const at::Tensor scale_in = call.tensor("scale");
  const at::Tensor residual_in = call.tensor("residual");
  const c10::cuda::CUDAGuard guard(x_in.device());
  const Plan plan = make_plan(call);
  const at::ScalarType dtype = x_in.scalar_type();
  const auto opmath_options = x_in.options().dtype(at::toOpMathType(dtype));
  const at::Tensor g = grad_out.contiguous();

  const bool x_full = x_in.sizes() == at::IntArrayRef(plan.shape);
  at::Tensor gx = x_full ? at::empty(plan.shape, x_in.options()) : at::Tensor();
  at::Tensor gv = (!x_full || bias_in.defined()) ? at::empty(plan.shape, opmath_options) : at::Tensor();
  at::Tensor gs = scale_in.defined() ? at::empty(plan.shape, opmath_options) : at::Tensor();
  if (plan.n > 0) {
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "bias_dropout_add_scale_backward_cuda", [&] {
      using opmath_t = at::opmath_type<scalar_t>;
      const scalar_t* gp = g.const_data_ptr<scalar_t>();
      scalar_t* gxp = gx.defined() ? gx.mutable_data_ptr<scalar_t>() : nullptr;
      opmath_t* gvp = gv.defined() ? gv.mutable_data_ptr<opmath_t>() : nullptr;
      opmath_t* gsp = gs.defined() ? gs.mutable_data_ptr<opmath_t>() : nullptr;
      const auto x = operand<scalar_t>(plan.x, plan.x_mode);
      const auto bias = operand<scalar_t>(plan.bias, plan.bias_mode);
      const auto scale = operand<scalar_t>(plan.scale, plan.scale_mode);
      const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
      constexpr int V = cuda::kVec<scalar_t>;
      if (packs_fit<scalar_t>(plan, {gp})) {  // outputs are stored element by element
        backward_kernel<V><<<cuda::blocks_for((plan.n + V - 1) / V), cuda::kThreads, 0, stream>>>(
            gp, x, bias, scale, plan.n, plan.d, plan.dropout, plan.scalar_scale, gxp, gvp, gsp);
      } else {
        backward_kernel<1><<<cuda::blocks_for(plan.n), cuda::kThreads, 0, stream>>>(
            gp, x, bias, scale, plan.n, plan.d, plan.dropout, plan.scalar_scale, gxp, gvp, gsp);
      }
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    });
  } else {
    if (gv.defined()) gv.zero_();
    if (gs.defined()) gs.zero_();
  }
  auto summed = [&](const at::Tensor& full, const at::Tensor& input) {
    return at::sum_to(full, input.sizes()).to(dtype);
  };
  std::vector<at::Tensor> grads(4);
  grads[0] = x_full ? gx : summed(gv, x_in);
  if (bias_in.defined()) grads[1] = summed(gv, bias_in);
  if (scale_in.defined()) grads[2] = summed(gs, scale_in);
  if (residual_in.defined()) {
    grads[3] = residual_in.sizes() == at::IntArrayRef(plan.shape) ? g.clone()
                                                                   : summed(g.to(at::toOpMathType(dtype)), residual_in);
  }
  return grads;
}

}  // namespace crossdev::ops::bias_dropout_add_scale
