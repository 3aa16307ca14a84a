#pragma once
// Shared by the CUDA kernels (compiled only when CROSSDEV_HAVE_CUDA). Operands are made
// contiguous on the host side; kernels use grid-stride loops and compute in at::opmath_type.
#include <ATen/OpMathType.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include <algorithm>
#include <cstdint>

namespace crossdev::ops::cuda {

constexpr int kThreads = 256;

inline int blocks_for(std::int64_t n) {
  const std::int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(std::min<std::int64_t>(std::max<std::int64_t>(blocks, 1), 65535));
}

template <typename T>
__device__ __forceinline__ T device_tanh(T v) { return tanh(v); }
template <>
__device__ __forceinline__ float device_tanh<float>(float v) { return tanhf(v); }

template <typename T>
__device__ __forceinline__ T device_exp(T v) { return exp(v); }
template <>
__device__ __forceinline__ float device_exp<float>(float v) { return expf(v); }

template <typename T>
__device__ __forceinline__ T device_rsqrt(T v) { return rsqrt(v); }
template <>
__device__ __forceinline__ float device_rsqrt<float>(float v) { return rsqrtf(v); }

}  // namespace crossdev::ops::cuda
