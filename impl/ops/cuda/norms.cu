// CUDA fused rms_norm: one block per row; the sum of squares is reduced in shared memory in
// opmath, then the block writes the normalized row. Forward only (backward: fallback-derived).
#include <ATen/Dispatch.h>
#include <ATen/Functions.h>

#include "ops/cuda/launch.cuh"
#include "ops/rms_norm/kernels.h"

namespace crossdev::ops {
namespace {

template <typename scalar_t>
__global__ void rms_norm_kernel(const scalar_t* x, const scalar_t* weight, scalar_t* out, std::int64_t d, double eps) {
  using opmath_t = at::opmath_type<scalar_t>;
  __shared__ opmath_t partial[cuda::kThreads];
  const scalar_t* row = x + blockIdx.x * d;
  scalar_t* dst = out + blockIdx.x * d;
  opmath_t sum = 0;
  for (std::int64_t i = threadIdx.x; i < d; i += blockDim.x) {
    const opmath_t v = static_cast<opmath_t>(row[i]);
    sum += v * v;
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  const opmath_t inv_rms = cuda::device_rsqrt(partial[0] / static_cast<opmath_t>(d) + static_cast<opmath_t>(eps));
  for (std::int64_t i = threadIdx.x; i < d; i += blockDim.x) {
    dst[i] = static_cast<scalar_t>(static_cast<opmath_t>(row[i]) * inv_rms * static_cast<opmath_t>(weight[i]));
  }
}

}  // namespace

at::Tensor rms_norm::fused_cuda(const OpCall& call) {
  const at::Tensor x = call.tensor("x").contiguous();
  const at::Tensor weight = call.tensor("weight").contiguous();
  const c10::cuda::CUDAGuard guard(x.device());
  at::Tensor out = at::empty(x.sizes(), x.options());
  const std::int64_t d = x.size(-1);
  const std::int64_t rows = d == 0 ? 0 : x.numel() / d;
  if (rows == 0) return out;
  TORCH_CHECK(rows <= 2147483647, "rms_norm fused_cuda: too many rows for a 1-D grid");
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "rms_norm_fused_cuda", [&] {
    rms_norm_kernel<scalar_t><<<static_cast<unsigned>(rows), cuda::kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.const_data_ptr<scalar_t>(), weight.const_data_ptr<scalar_t>(), out.mutable_data_ptr<scalar_t>(), d,
        call.scalar("eps", 1e-6));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return out;
}

}  // namespace crossdev::ops
