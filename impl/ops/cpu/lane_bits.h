#pragma once
// Per-lane bit masks for the fused CPU kernels: bit j of a mask says something about element
// first + j, and turns into a vector blend without a branch per element.
//
//   keep_bits(key, threshold, first)  the portable dropout mask (ops/portable_random.h) of 64
//       elements: bit j is portable_random::dropout_keep(key, first + j, threshold). SplitMix64
//       (two 64-bit multiplies per element) evaluated one element at a time made
//       bias_dropout_add_scale compute-bound; the AVX512 copy hashes 8 counters per instruction
//       (AVX512DQ's 64-bit multiply), the AVX2 copy 4 (the multiply built from three
//       32x32->64 multiplies), DEFAULT one, all to the same bits.
//   nonzero_bits<N>(bytes)  bit j set where bool byte j is nonzero (a softmax mask row), from one
//       SSE2 byte compare instead of N scalar widenings.
//   select_lanes(bits, v, fill)  v with the lanes whose bit is set replaced by fill;
//   lanes(bits, value)          value where the bit is set, 0 elsewhere (a keep factor).
// test_portable_random.cpp and the capability tests check every copy built against the scalar rules.
#include <ATen/cpu/vec/vec.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "ops/portable_random.h"

#if defined(CPU_CAPABILITY_AVX512) || defined(CPU_CAPABILITY_AVX2)
#include <immintrin.h>
#endif

namespace crossdev::ops::cpu {
inline namespace CPU_CAPABILITY {  // compiled once per instruction set

constexpr int kKeepBlock = 64;  // elements decided per keep_bits call

#if defined(CPU_CAPABILITY_AVX512)
inline __m512i mix64_x8(__m512i z) {
  z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 30)),
                         _mm512_set1_epi64(static_cast<long long>(0xBF58476D1CE4E5B9ULL)));
  z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 27)),
                         _mm512_set1_epi64(static_cast<long long>(0x94D049BB133111EBULL)));
  return _mm512_xor_si512(z, _mm512_srli_epi64(z, 31));
}
#elif defined(CPU_CAPABILITY_AVX2)
// a * b mod 2^64 per 64-bit lane: lo(a) lo(b) + ((hi(a) lo(b) + lo(a) hi(b)) << 32).
inline __m256i mullo_epi64(__m256i a, std::uint64_t b) {
  const __m256i vb = _mm256_set1_epi64x(static_cast<long long>(b));
  const __m256i vb_hi = _mm256_set1_epi64x(static_cast<long long>(b >> 32));
  const __m256i lo = _mm256_mul_epu32(a, vb);
  const __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), vb), _mm256_mul_epu32(a, vb_hi));
  return _mm256_add_epi64(lo, _mm256_slli_epi64(cross, 32));
}
inline __m256i mix64_x4(__m256i z) {
  z = mullo_epi64(_mm256_xor_si256(z, _mm256_srli_epi64(z, 30)), 0xBF58476D1CE4E5B9ULL);
  z = mullo_epi64(_mm256_xor_si256(z, _mm256_srli_epi64(z, 27)), 0x94D049BB133111EBULL);
  return _mm256_xor_si256(z, _mm256_srli_epi64(z, 31));
}
#endif

inline std::uint64_t keep_bits(std::uint64_t key, std::uint64_t threshold, std::uint64_t first) {
  namespace pr = portable_random;
  if (threshold >= pr::kDropAll) return 0;  // p >= 1 or NaN: nothing kept, nothing to hash
  std::uint64_t bits = 0;
#if defined(CPU_CAPABILITY_AVX512) || defined(CPU_CAPABILITY_AVX2)
  // Lane j hashes key + (first + j + 1) * golden; each step adds lanes * golden (mod 2^64).
  const std::uint64_t z0 = key + (first + 1) * pr::kGolden;
#endif
#if defined(CPU_CAPABILITY_AVX512)
  const auto g = [](std::uint64_t k) { return static_cast<long long>(k * pr::kGolden); };
  __m512i z = _mm512_add_epi64(_mm512_set1_epi64(static_cast<long long>(z0)),
                               _mm512_set_epi64(g(7), g(6), g(5), g(4), g(3), g(2), g(1), g(0)));
  const __m512i step = _mm512_set1_epi64(g(8));
  // (w >> 11) >= threshold iff w >= threshold << 11, for threshold < 2^53 (kDropAll returned above):
  // one shift fewer per 8 elements, the same bits.
  const __m512i t = _mm512_set1_epi64(static_cast<long long>(threshold << 11));
  for (int b = 0; b < kKeepBlock; b += 8) {
    const __mmask8 keep = _mm512_cmpge_epu64_mask(mix64_x8(z), t);
    bits |= static_cast<std::uint64_t>(keep) << b;
    z = _mm512_add_epi64(z, step);
  }
#elif defined(CPU_CAPABILITY_AVX2)
  const auto g = [](std::uint64_t k) { return static_cast<long long>(k * pr::kGolden); };
  __m256i z = _mm256_add_epi64(_mm256_set1_epi64x(static_cast<long long>(z0)), _mm256_set_epi64x(g(3), g(2), g(1), g(0)));
  const __m256i step = _mm256_set1_epi64x(g(4));
  // m < 2^53 and threshold <= 2^53 are both non-negative as signed 64-bit: a signed compare.
  const __m256i t = _mm256_set1_epi64x(static_cast<long long>(threshold));
  for (int b = 0; b < kKeepBlock; b += 4) {
    const __m256i dropped = _mm256_cmpgt_epi64(t, _mm256_srli_epi64(mix64_x4(z), 11));
    bits |= static_cast<std::uint64_t>(~_mm256_movemask_pd(_mm256_castsi256_pd(dropped)) & 0xF) << b;
    z = _mm256_add_epi64(z, step);
  }
#else
  for (int j = 0; j < kKeepBlock; ++j) {
    bits |= static_cast<std::uint64_t>(pr::dropout_keep(key, first + static_cast<std::uint64_t>(j), threshold)) << j;
  }
#endif
  return bits;
}

template <int N>
std::uint64_t nonzero_bits(const bool* bytes) {
  static_assert(N >= 1 && N <= 16, "one 16-byte compare");
#if defined(CPU_CAPABILITY_AVX512) || defined(CPU_CAPABILITY_AVX2)
  if constexpr (N == 16 || N == 8 || N == 4) {
    __m128i v;
    if constexpr (N == 16) {
      v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes));
    } else if constexpr (N == 8) {
      v = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(bytes));
    } else {
      int word;
      std::memcpy(&word, bytes, 4);
      v = _mm_cvtsi32_si128(word);
    }
    const unsigned zero = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_setzero_si128())));
    return ~zero & ((1u << N) - 1);
  }
#endif
  std::uint64_t bits = 0;
  for (int j = 0; j < N; ++j) bits |= static_cast<std::uint64_t>(bytes[j] != 0) << j;
  return bits;
}

template <typename T>
at::vec::Vectorized<T> select_lanes(std::uint64_t bits, const at::vec::Vectorized<T>& v, T fill) {
  using Vec = at::vec::Vectorized<T>;
#if defined(CPU_CAPABILITY_AVX512)
  if constexpr (std::is_same_v<T, float>) {
    return Vec(_mm512_mask_mov_ps(v, static_cast<__mmask16>(bits), _mm512_set1_ps(fill)));
  } else if constexpr (std::is_same_v<T, double>) {
    return Vec(_mm512_mask_mov_pd(v, static_cast<__mmask8>(bits), _mm512_set1_pd(fill)));
  }
#elif defined(CPU_CAPABILITY_AVX2)
  if constexpr (std::is_same_v<T, float>) {
    const __m256i select = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    const __m256i on = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(static_cast<int>(bits & 0xFF)), select), select);
    return Vec(_mm256_blendv_ps(v, _mm256_set1_ps(fill), _mm256_castsi256_ps(on)));
  } else if constexpr (std::is_same_v<T, double>) {
    const __m256i select = _mm256_setr_epi64x(1, 2, 4, 8);
    const __m256i on = _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_set1_epi64x(static_cast<long long>(bits & 0xF)), select), select);
    return Vec(_mm256_blendv_pd(v, _mm256_set1_pd(fill), _mm256_castsi256_pd(on)));
  }
#endif
  __at_align__ T out[Vec::size()];
  v.store(out);
  for (int j = 0; j < Vec::size(); ++j) {
    if ((bits >> j) & 1) out[j] = fill;
  }
  return Vec::loadu(out);
}

template <typename T>
at::vec::Vectorized<T> lanes(std::uint64_t bits, T value) {
  return select_lanes<T>(~bits, at::vec::Vectorized<T>(value), T(0));
}

// The keep factors of consecutive vectors starting at element `first`: next() returns the factor
// vector (value or 0 per lane) of the next Vectorized<T>::size() elements, hashing a new block of
// kKeepBlock elements when the previous one is used up.
template <typename T>
class KeepLanes {
 public:
  KeepLanes(std::uint64_t key, std::uint64_t threshold, std::uint64_t first, T value)
      : key_(key), threshold_(threshold), next_(first), value_(value) {}
  at::vec::Vectorized<T> next() {
    static_assert(kKeepBlock % at::vec::Vectorized<T>::size() == 0, "a block is whole vectors");
    if (used_ == kKeepBlock) {
      bits_ = keep_bits(key_, threshold_, next_);
      next_ += kKeepBlock;
      used_ = 0;
    }
    const auto v = lanes<T>(bits_ >> used_, value_);
    used_ += at::vec::Vectorized<T>::size();
    return v;
  }

 private:
  std::uint64_t key_, threshold_, next_;
  T value_;
  std::uint64_t bits_ = 0;
  int used_ = kKeepBlock;
};

}  // namespace CPU_CAPABILITY
}  // namespace crossdev::ops::cpu
