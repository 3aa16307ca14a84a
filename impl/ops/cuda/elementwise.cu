// CUDA fused kernels for the elementwise ops: modulate, gelu_tanh, swiglu. Forward only; their
// backward is derived from the fallback (docs/ops.md). Mutants exist only in the CPU kernels.
#include <ATen/Dispatch.h>
#include <ATen/Functions.h>

#include "ops/cuda/launch.cuh"
#include "ops/gelu_tanh/kernels.h"
#include "ops/modulate/kernels.h"
#include "ops/swiglu/kernels.h"

namespace crossdev::ops {
namespace {

template <typename scalar_t>
__global__ void modulate_kernel(const scalar_t* x, const scalar_t* shift, const scalar_t* scale, scalar_t* out,
                                std::int64_t n, std::int64_t td, std::int64_t d, std::int64_t shift_batch_stride,
                                std::int64_t scale_batch_stride) {
  using opmath_t = at::opmath_type<scalar_t>;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(blockDim.x) * gridDim.x) {
    const std::int64_t b = i / td;
    const std::int64_t k = i % d;
    const opmath_t sc = static_cast<opmath_t>(scale[b * scale_batch_stride + k]);
    const opmath_t sh = static_cast<opmath_t>(shift[b * shift_batch_stride + k]);
    out[i] = static_cast<scalar_t>(static_cast<opmath_t>(x[i]) * (opmath_t(1) + sc) + sh);
  }
}

template <typename scalar_t>
__global__ void gelu_tanh_kernel(const scalar_t* x, scalar_t* out, std::int64_t n) {
  using opmath_t = at::opmath_type<scalar_t>;
  const opmath_t beta(gelu_tanh::kBeta), kappa(gelu_tanh::kKappa);
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(blockDim.x) * gridDim.x) {
    const opmath_t v = static_cast<opmath_t>(x[i]);
    out[i] = static_cast<scalar_t>(opmath_t(0.5) * v * (opmath_t(1) + cuda::device_tanh(beta * (v + kappa * v * v * v))));
  }
}

template <typename scalar_t>
__global__ void swiglu_kernel(const scalar_t* gate, const scalar_t* up, scalar_t* out, std::int64_t n) {
  using opmath_t = at::opmath_type<scalar_t>;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(blockDim.x) * gridDim.x) {
    const opmath_t g = static_cast<opmath_t>(gate[i]);
    out[i] = static_cast<scalar_t>(g / (opmath_t(1) + cuda::device_exp(-g)) * static_cast<opmath_t>(up[i]));
  }
}

}  // namespace

at::Tensor modulate::fused_cuda(const OpCall& call) {
  const at::Tensor x = call.tensor("x").contiguous();
  const at::Tensor shift = call.tensor("shift").contiguous();
  const at::Tensor scale = call.tensor("scale").contiguous();
  const c10::cuda::CUDAGuard guard(x.device());
  at::Tensor out = at::empty(x.sizes(), x.options());
  const std::int64_t n = x.numel();
  if (n == 0) return out;
  const std::int64_t d = x.size(2);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "modulate_fused_cuda", [&] {
    modulate_kernel<scalar_t><<<cuda::blocks_for(n), cuda::kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.const_data_ptr<scalar_t>(), shift.const_data_ptr<scalar_t>(), scale.const_data_ptr<scalar_t>(),
        out.mutable_data_ptr<scalar_t>(), n, x.size(1) * d, d, shift.size(0) == 1 ? 0 : d, scale.size(0) == 1 ? 0 : d);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return out;
}

at::Tensor gelu_tanh::fused_cuda(const OpCall& call) {
  const at::Tensor x = call.tensor("x").contiguous();
  const c10::cuda::CUDAGuard guard(x.device());
  at::Tensor out = at::empty(x.sizes(), x.options());
  const std::int64_t n = x.numel();
  if (n == 0) return out;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "gelu_tanh_fused_cuda", [&] {
    gelu_tanh_kernel<scalar_t><<<cuda::blocks_for(n), cuda::kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.const_data_ptr<scalar_t>(), out.mutable_data_ptr<scalar_t>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return out;
}

at::Tensor swiglu::fused_cuda(const OpCall& call) {
  // Broadcast operands are materialized: the kernel reads both operands densely.
  const std::vector<at::Tensor> operands = at::broadcast_tensors({call.tensor("gate"), call.tensor("up")});
  const at::Tensor gate = operands[0].contiguous();
  const at::Tensor up = operands[1].contiguous();
  const c10::cuda::CUDAGuard guard(gate.device());
  at::Tensor out = at::empty(gate.sizes(), gate.options());
  const std::int64_t n = gate.numel();
  if (n == 0) return out;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, gate.scalar_type(), "swiglu_fused_cuda", [&] {
    swiglu_kernel<scalar_t><<<cuda::blocks_for(n), cuda::kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
        gate.const_data_ptr<scalar_t>(), up.const_data_ptr<scalar_t>(), out.mutable_data_ptr<scalar_t>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return out;
}

}  // namespace crossdev::ops
