#pragma once
// Shared by the CUDA kernels (compiled only when CROSSDEV_HAVE_CUDA). Kernels compute in
// at::opmath_type and round once on store.
//   elementwise kernels  grid-stride loops; each thread moves a Pack of kVec<scalar_t> elements
//                        (16 bytes: 4 float, 8 half/bfloat16, 2 double) when every pointer is
//                        16-byte aligned and the packs do not straddle a row, else one element
//   row kernels          one block per row (threads_for_row, launch_rows), warp-shuffle block reductions
//   broadcast gradients  elementwise partial products reduced over the broadcast dims with
//                        at::sum in opmath (reduce_to), or a column kernel (column_grads)
// Dropout: the portable counter-based keep decision (portable_random.h), bit for bit.
#include <ATen/OpMathType.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>

namespace crossdev::ops::cuda {

constexpr int kThreads = 256;

inline int blocks_for(std::int64_t n) {
  const std::int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(std::min<std::int64_t>(std::max<std::int64_t>(blocks, 1), 65535));
}

// Threads of a one-block-per-row kernel: enough warps to give each thread about one pack.
inline int threads_for_row(std::int64_t packs_per_row) {
  const std::int64_t warps = (packs_per_row + 31) / 32;
  return static_cast<int>(std::clamp<std::int64_t>(warps, 1, 16) * 32);
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

// 1 / sqrt(v) with IEEE sqrt and division (rsqrtf is up to 2 ulp off; the CPU kernels divide).
template <typename T>
__device__ __forceinline__ T device_inv_sqrt(T v) { return T(1) / sqrt(v); }

// -inf in opmath (std::numeric_limits is constexpr host code: not callable here without
// --expt-relaxed-constexpr).
template <typename T>
__device__ __forceinline__ T neg_infinity();
template <>
__device__ __forceinline__ float neg_infinity<float>() { return -__int_as_float(0x7f800000); }
template <>
__device__ __forceinline__ double neg_infinity<double>() { return -__longlong_as_double(0x7ff0000000000000LL); }

// ---- vector access ---------------------------------------------------------------------------

template <typename scalar_t>
constexpr int kVec = static_cast<int>(16 / sizeof(scalar_t));

template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

template <int N, typename T>
__device__ __forceinline__ Pack<T, N> load_pack(const T* p) {
  return *reinterpret_cast<const Pack<T, N>*>(p);
}
template <int N, typename T>
__device__ __forceinline__ void store_pack(T* p, const Pack<T, N>& pack) {
  *reinterpret_cast<Pack<T, N>*>(p) = pack;
}

inline bool aligned16(const void* p) { return p == nullptr || reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// Whether rows of d elements can be read in packs of kVec<scalar_t>: d is a multiple of the pack
// and every pointer is 16-byte aligned (or null).
template <typename scalar_t>
bool packs_fit(std::int64_t d, std::initializer_list<const void*> pointers) {
  if (d % kVec<scalar_t> != 0) return false;
  for (const void* p : pointers) {
    if (!aligned16(p)) return false;
  }
  return true;
}

// ---- row kernels -----------------------------------------------------------------------------

// Launches a row kernel, one block per row, on the current stream: its instance over packs of
// kVec<scalar_t> (`packed`) when packs_fit(d, pointers), else its instance over single elements.
template <typename scalar_t, typename... Params, typename... Args>
void launch_rows(void (*packed)(Params...), void (*single)(Params...), std::int64_t rows, std::int64_t d,
                 std::initializer_list<const void*> pointers, Args... args) {
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  if (packs_fit<scalar_t>(d, pointers)) {
    packed<<<static_cast<unsigned>(rows), threads_for_row(d / kVec<scalar_t>), 0, stream>>>(args...);
  } else {
    single<<<static_cast<unsigned>(rows), threads_for_row(d), 0, stream>>>(args...);
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// ---- reductions ------------------------------------------------------------------------------

struct SumOp {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};
struct MaxOp {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const { return a > b ? a : b; }  // -inf safe
};

template <typename T, typename Op>
__device__ __forceinline__ T warp_reduce(T v, Op op) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Every thread of the block gets the reduction of `v` over the block (blockDim.x a multiple of
// 32). Safe to call repeatedly in one kernel.
template <typename T, typename Op>
__device__ __forceinline__ T block_reduce(T v, Op op, T identity) {
  __shared__ T warp_results[32];
  __shared__ T result;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  v = warp_reduce(v, op);
  __syncthreads();  // a previous call may still be reading warp_results / result
  if (lane == 0) warp_results[warp] = v;
  __syncthreads();
  if (warp == 0) {
    const int warps = static_cast<int>(blockDim.x >> 5);
    T w = lane < warps ? warp_results[lane] : identity;
    w = warp_reduce(w, op);
    if (lane == 0) result = w;
  }
  __syncthreads();
  return result;
}

// ---- portable dropout (portable_random.h, ported bit for bit) --------------------------------

constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ULL;

__host__ __device__ __forceinline__ std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// uniform01(key, i) = m * 2^-53 with m = mix64(key + (i + 1) * golden) >> 11, exactly as on the CPU.
__device__ __forceinline__ double uniform01(std::uint64_t key, std::uint64_t counter) {
  return static_cast<double>(mix64(key + (counter + 1) * kGolden) >> 11) * 0x1.0p-53;
}

// The CPU keeps element i iff uniform01(key, i) >= p, i.e. m * 2^-53 >= p. Both sides are exact
// doubles (m < 2^53, and p * 2^53 only shifts p's exponent), so this is m >= p * 2^53, and since
// m is an integer, m >= ceil(p * 2^53): an integer compare with the same outcome for every m.
// p = 1 gives 2^53 (nothing kept), p = 0 gives 0 (everything kept).
inline std::uint64_t dropout_threshold(double p) {
  return static_cast<std::uint64_t>(std::ceil(p * 9007199254740992.0));  // 2^53
}

__device__ __forceinline__ bool dropout_keep(std::uint64_t key, std::uint64_t index, std::uint64_t threshold) {
  return (mix64(key + (index + 1) * kGolden) >> 11) >= threshold;
}

}  // namespace crossdev::ops::cuda
