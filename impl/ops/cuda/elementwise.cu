// CUDA fused kernels for the elementwise ops: modulate, gelu_tanh, swiglu, forward and backward.
// Operands are made contiguous on the host; every kernel moves 16-byte packs (launch.cuh) when
// all its pointers are aligned (and, for modulate, D is a multiple of the pack), else elements.
// Mutants exist only in the CPU kernels.
#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>
#include <ATen/Functions.h>

#include "ops/cuda/column_sums.cuh"
#include "ops/cuda/launch.cuh"
#include "ops/gelu_tanh/kernels.h"
#include "ops/modulate/kernels.h"
#include "ops/output.h"
#include "ops/swiglu/kernels.h"

namespace crossdev::ops {
namespace {

using cuda::Pack;

// ---- a generic map: out = f(in[0..NIN)) elementwise over n contiguous elements ---------------

template <typename scalar_t, int NIN>
struct Inputs {
  const scalar_t* p[NIN];
};

template <int VEC, int NIN, typename scalar_t, typename F>
__global__ void map_kernel(scalar_t* __restrict__ out, Inputs<scalar_t, NIN> in, std::int64_t n, F f) {
  using opmath_t = at::opmath_type<scalar_t>;
  const std::int64_t stride = static_cast<std::int64_t>(blockDim.x) * gridDim.x;
  const std::int64_t tid = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const std::int64_t packs = n / VEC;
  for (std::int64_t j = tid; j < packs; j += stride) {
    Pack<scalar_t, VEC> src[NIN];
#pragma unroll
    for (int k = 0; k < NIN; ++k) src[k] = cuda::load_pack<VEC>(in.p[k] + j * VEC);
    Pack<scalar_t, VEC> dst;
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      opmath_t v[NIN];
#pragma unroll
      for (int k = 0; k < NIN; ++k) v[k] = static_cast<opmath_t>(src[k].v[e]);
      dst.v[e] = static_cast<scalar_t>(f(v));
    }
    cuda::store_pack<VEC>(out + j * VEC, dst);
  }
  for (std::int64_t i = packs * VEC + tid; i < n; i += stride) {  // the n % VEC tail
    opmath_t v[NIN];
#pragma unroll
    for (int k = 0; k < NIN; ++k) v[k] = static_cast<opmath_t>(in.p[k][i]);
    out[i] = static_cast<scalar_t>(f(v));
  }
}

template <int NIN, typename scalar_t, typename F>
void launch_map(scalar_t* out, Inputs<scalar_t, NIN> in, std::int64_t n, F f) {
  if (n == 0) return;
  bool vectorized = cuda::aligned16(out);
  for (int k = 0; k < NIN; ++k) vectorized = vectorized && cuda::aligned16(in.p[k]);
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  if (vectorized) {
    constexpr int V = cuda::kVec<scalar_t>;
    map_kernel<V, NIN><<<cuda::blocks_for((n + V - 1) / V), cuda::kThreads, 0, stream>>>(out, in, n, f);
  } else {
    map_kernel<1, NIN><<<cuda::blocks_for(n), cuda::kThreads, 0, stream>>>(out, in, n, f);
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// ---- gelu_tanh -------------------------------------------------------------------------------

template <typename opmath_t>
struct GeluForward {
  __device__ __forceinline__ opmath_t operator()(const opmath_t (&v)[1]) const {
    const opmath_t x = v[0];
    const opmath_t beta(gelu_tanh::kBeta), kappa(gelu_tanh::kKappa);
    return opmath_t(0.5) * x * (opmath_t(1) + cuda::device_tanh(beta * (x + kappa * x * x * x)));
  }
};

// d/dx = 0.5 (1 + t) + 0.5 x (1 - t^2) beta (1 + 3 kappa x^2), t = tanh(beta (x + kappa x^3)).
template <typename opmath_t>
struct GeluBackward {
  __device__ __forceinline__ opmath_t operator()(const opmath_t (&v)[2]) const {
    const opmath_t g = v[0], x = v[1];
    const opmath_t beta(gelu_tanh::kBeta), kappa(gelu_tanh::kKappa), half(0.5), one(1);
    const opmath_t t = cuda::device_tanh(beta * (x + kappa * x * x * x));
    const opmath_t dinner = beta * (one + opmath_t(3) * kappa * x * x);
    return g * (half * (one + t) + half * x * (one - t * t) * dinner);
  }
};

// ---- swiglu ----------------------------------------------------------------------------------

template <typename opmath_t>
struct SwigluForward {
  __device__ __forceinline__ opmath_t operator()(const opmath_t (&v)[2]) const {
    const opmath_t g = v[0];
    return g / (opmath_t(1) + cuda::device_exp(-g)) * v[1];
  }
};

// ggate = grad * up * sigmoid(g) (1 + g (1 - sigmoid(g))), gup = grad * silu(g). Each output is
// written in the storage dtype when its input has the output's shape, else in opmath (summed over
// the broadcast dims on the host, then rounded once).
template <int VEC, typename scalar_t, typename gate_out_t, typename up_out_t>
__global__ void swiglu_backward_kernel(const scalar_t* __restrict__ grad, const scalar_t* __restrict__ gate,
                                       const scalar_t* __restrict__ up, gate_out_t* __restrict__ ggate,
                                       up_out_t* __restrict__ gup, std::int64_t n) {
  using opmath_t = at::opmath_type<scalar_t>;
  const std::int64_t stride = static_cast<std::int64_t>(blockDim.x) * gridDim.x;
  const std::int64_t tid = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  auto one = [&](std::int64_t i, opmath_t gr, opmath_t g, opmath_t u) {
    const opmath_t sig = opmath_t(1) / (opmath_t(1) + cuda::device_exp(-g));
    ggate[i] = static_cast<gate_out_t>(gr * u * sig * (opmath_t(1) + g * (opmath_t(1) - sig)));
    gup[i] = static_cast<up_out_t>(gr * g * sig);
  };
  const std::int64_t packs = n / VEC;
  for (std::int64_t j = tid; j < packs; j += stride) {
    const auto gr = cuda::load_pack<VEC>(grad + j * VEC);
    const auto g = cuda::load_pack<VEC>(gate + j * VEC);
    const auto u = cuda::load_pack<VEC>(up + j * VEC);
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      one(j * VEC + e, static_cast<opmath_t>(gr.v[e]), static_cast<opmath_t>(g.v[e]), static_cast<opmath_t>(u.v[e]));
    }
  }
  for (std::int64_t i = packs * VEC + tid; i < n; i += stride) {
    one(i, static_cast<opmath_t>(grad[i]), static_cast<opmath_t>(gate[i]), static_cast<opmath_t>(up[i]));
  }
}

// ---- modulate --------------------------------------------------------------------------------

// out = x * (1 + scale[b]) + shift[b] (kShift), or x * (1 + scale[b]) (the backward's grad_x with
// x = grad). VEC > 1 only when D % VEC == 0, so a pack never straddles a row.
template <int VEC, bool kShift, typename scalar_t>
__global__ void modulate_kernel(const scalar_t* __restrict__ x, const scalar_t* __restrict__ shift,
                                const scalar_t* __restrict__ scale, scalar_t* __restrict__ out, std::int64_t n,
                                std::int64_t td, std::int64_t d, std::int64_t shift_batch_stride,
                                std::int64_t scale_batch_stride) {
  using opmath_t = at::opmath_type<scalar_t>;
  const std::int64_t stride = static_cast<std::int64_t>(blockDim.x) * gridDim.x;
  for (std::int64_t j = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; j * VEC < n; j += stride) {
    const std::int64_t i = j * VEC;
    const std::int64_t b = i / td;
    const std::int64_t k = i % d;
    const auto xv = cuda::load_pack<VEC>(x + i);
    const auto sc = cuda::load_pack<VEC>(scale + b * scale_batch_stride + k);
    Pack<scalar_t, VEC> sh;
    if (kShift) sh = cuda::load_pack<VEC>(shift + b * shift_batch_stride + k);
    Pack<scalar_t, VEC> dst;
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      opmath_t v = static_cast<opmath_t>(xv.v[e]) * (opmath_t(1) + static_cast<opmath_t>(sc.v[e]));
      if (kShift) v = v + static_cast<opmath_t>(sh.v[e]);
      dst.v[e] = static_cast<scalar_t>(v);
    }
    cuda::store_pack<VEC>(out + i, dst);
  }
}

template <bool kShift, typename scalar_t>
void launch_modulate(const scalar_t* x, const scalar_t* shift, const scalar_t* scale, scalar_t* out, std::int64_t b,
                     std::int64_t t, std::int64_t d, bool shift_shared, bool scale_shared) {
  const std::int64_t n = b * t * d;
  if (n == 0) return;
  constexpr int V = cuda::kVec<scalar_t>;
  const bool vectorized = d % V == 0 && cuda::aligned16(x) && cuda::aligned16(shift) && cuda::aligned16(scale) &&
                          cuda::aligned16(out);
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const std::int64_t ss = shift_shared ? 0 : d, cs = scale_shared ? 0 : d;
  if (vectorized) {
    modulate_kernel<V, kShift><<<cuda::blocks_for(n / V), cuda::kThreads, 0, stream>>>(x, shift, scale, out, n, t * d,
                                                                                        d, ss, cs);
  } else {
    modulate_kernel<1, kShift><<<cuda::blocks_for(n), cuda::kThreads, 0, stream>>>(x, shift, scale, out, n, t * d, d,
                                                                                    ss, cs);
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

at::Tensor modulate::fused_cuda(const OpCall& call) {
  const at::Tensor x = call.tensor("x").contiguous();
  const at::Tensor shift = call.tensor("shift").contiguous();
  const at::Tensor scale = call.tensor("scale").contiguous();
  const c10::cuda::CUDAGuard guard(x.device());
  at::Tensor out = output_for(call, x.sizes(), x.options());
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "modulate_fused_cuda", [&] {
    launch_modulate<true>(x.const_data_ptr<scalar_t>(), shift.const_data_ptr<scalar_t>(),
                          scale.const_data_ptr<scalar_t>(), out.mutable_data_ptr<scalar_t>(), x.size(0), x.size(1),
                          x.size(2), shift.size(0) == 1, scale.size(0) == 1);
  });
  return out;
}

// grad_x = g * (1 + scale[b]); grad_shift[b] = sum_t g; grad_scale[b] = sum_t g * x (and over b
// too for [1, D] rows).
std::vector<at::Tensor> modulate::fused_backward_cuda(const OpCall& call, const at::Tensor& grad_out) {
  cuda::ModulatedBackward grads(call, grad_out);
  const at::Tensor& x = grads.x;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "modulate_backward_cuda", [&] {
    const scalar_t* sc = grads.scale.const_data_ptr<scalar_t>();
    launch_modulate<false>(grads.g.const_data_ptr<scalar_t>(), sc, sc, grads.grad_x.mutable_data_ptr<scalar_t>(),
                           x.size(0), x.size(1), x.size(2), true, grads.scale.size(0) == 1);
    grads.parameter_gradients<scalar_t>(at::Tensor(), at::Tensor());
  });
  return grads.gradients();
}

at::Tensor gelu_tanh::fused_cuda(const OpCall& call) {
  const at::Tensor x = call.tensor("x").contiguous();
  const c10::cuda::CUDAGuard guard(x.device());
  at::Tensor out = output_for(call, x.sizes(), x.options());
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "gelu_tanh_fused_cuda", [&] {
    using opmath_t = at::opmath_type<scalar_t>;
    launch_map<1>(out.mutable_data_ptr<scalar_t>(), Inputs<scalar_t, 1>{{x.const_data_ptr<scalar_t>()}}, x.numel(),
                  GeluForward<opmath_t>{});
  });
  return out;
}

std::vector<at::Tensor> gelu_tanh::fused_backward_cuda(const OpCall& call, const at::Tensor& grad_out) {
  const at::Tensor x = call.tensor("x").contiguous();
  const at::Tensor g = grad_out.contiguous();
  const c10::cuda::CUDAGuard guard(x.device());
  at::Tensor grad_x = at::empty(x.sizes(), x.options());
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "gelu_tanh_backward_cuda", [&] {
    using opmath_t = at::opmath_type<scalar_t>;
    launch_map<2>(grad_x.mutable_data_ptr<scalar_t>(),
                  Inputs<scalar_t, 2>{{g.const_data_ptr<scalar_t>(), x.const_data_ptr<scalar_t>()}}, x.numel(),
                  GeluBackward<opmath_t>{});
  });
  return {grad_x};
}

at::Tensor swiglu::fused_cuda(const OpCall& call) {
  // Broadcast operands are materialized: the kernel reads both operands densely.
  const std::vector<at::Tensor> operands = at::broadcast_tensors({call.tensor("gate"), call.tensor("up")});
  const at::Tensor gate = operands[0].contiguous();
  const at::Tensor up = operands[1].contiguous();
  const c10::cuda::CUDAGuard guard(gate.device());
  at::Tensor out = output_for(call, gate.sizes(), gate.options());
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, gate.scalar_type(), "swiglu_fused_cuda", [&] {
    using opmath_t = at::opmath_type<scalar_t>;
    launch_map<2>(out.mutable_data_ptr<scalar_t>(),
                  Inputs<scalar_t, 2>{{gate.const_data_ptr<scalar_t>(), up.const_data_ptr<scalar_t>()}}, gate.numel(),
                  SwigluForward<opmath_t>{});
  });
  return out;
}

std::vector<at::Tensor> swiglu::fused_backward_cuda(const OpCall& call, const at::Tensor& grad_out) {
  const at::Tensor gate_in = call.tensor("gate");
  const at::Tensor up_in = call.tensor("up");
  const std::vector<at::Tensor> operands = at::broadcast_tensors({gate_in, up_in});
  const at::Tensor gate = operands[0].contiguous();
  const at::Tensor up = operands[1].contiguous();
  const at::Tensor g = grad_out.contiguous();
  const c10::cuda::CUDAGuard guard(gate.device());
  const at::ScalarType dtype = gate.scalar_type();
  const bool gate_full = gate_in.sizes() == gate.sizes();
  const bool up_full = up_in.sizes() == up.sizes();
  const at::ScalarType opmath_dtype = at::toOpMathType(dtype);
  at::Tensor ggate = at::empty(gate.sizes(), gate.options().dtype(gate_full ? dtype : opmath_dtype));
  at::Tensor gup = at::empty(gate.sizes(), gate.options().dtype(up_full ? dtype : opmath_dtype));
  const std::int64_t n = gate.numel();
  if (n > 0) {
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "swiglu_backward_cuda", [&] {
      using opmath_t = at::opmath_type<scalar_t>;
      const scalar_t* gp = g.const_data_ptr<scalar_t>();
      const scalar_t* gatep = gate.const_data_ptr<scalar_t>();
      const scalar_t* upp = up.const_data_ptr<scalar_t>();
      const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
      auto launch = [&](auto* ggate_p, auto* gup_p) {
        using ga_t = std::remove_pointer_t<decltype(ggate_p)>;
        using gu_t = std::remove_pointer_t<decltype(gup_p)>;
        constexpr int V = cuda::kVec<scalar_t>;
        const bool vectorized = cuda::aligned16(gp) && cuda::aligned16(gatep) && cuda::aligned16(upp);
        if (vectorized) {
          swiglu_backward_kernel<V, scalar_t, ga_t, gu_t>
              <<<cuda::blocks_for((n + V - 1) / V), cuda::kThreads, 0, stream>>>(gp, gatep, upp, ggate_p, gup_p, n);
        } else {
          swiglu_backward_kernel<1, scalar_t, ga_t, gu_t>
              <<<cuda::blocks_for(n), cuda::kThreads, 0, stream>>>(gp, gatep, upp, ggate_p, gup_p, n);
        }
        C10_CUDA_KERNEL_LAUNCH_CHECK();
      };
      if (gate_full && up_full) {
        launch(ggate.mutable_data_ptr<scalar_t>(), gup.mutable_data_ptr<scalar_t>());
      } else if (gate_full) {
        launch(ggate.mutable_data_ptr<scalar_t>(), gup.mutable_data_ptr<opmath_t>());
      } else if (up_full) {
        launch(ggate.mutable_data_ptr<opmath_t>(), gup.mutable_data_ptr<scalar_t>());
      } else {
        launch(ggate.mutable_data_ptr<opmath_t>(), gup.mutable_data_ptr<opmath_t>());
      }
    });
  }
  // Broadcast inputs: sum over the broadcast dims in opmath, round once.
  if (!gate_full) ggate = at::sum_to(ggate, gate_in.sizes()).to(dtype);
  if (!up_full) gup = at::sum_to(gup, up_in.sizes()).to(dtype);
  return {ggate, gup};
}

}  // namespace crossdev::ops
