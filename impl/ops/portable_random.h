#pragma once
// Counter-based random numbers that are the same bits on every machine and device.
//
// Why not at::Generator's own engines: their streams differ across backends (CUDA Philox vs CPU
// mt19937) and across vectorized code paths, so "the same inputs on every runner" and "the same
// dropout mask on every device" would not hold. torch's generators supply only the (seed, offset)
// of a dropout call (generator_stream.h); the bits come from here. Here value i of a stream is a pure function of (key, i):
// SplitMix64 finalizer over key + (i + 1) * golden ratio, the top 53 bits scaled by 2^-53.
// Only integer ops and exact IEEE double ops are used, so results are bit-identical everywhere.
//
// Streams:
//   inputs        key = stream_key({op, shape_set, input name}, seed)
//   dropout mask  a call's stream is a (seed, offset) pair drawn from torch's generator
//                 (generator_stream.h); key = dropout_key(seed), and element i (row-major index
//                 in the output shape) is kept iff uniform01(key, offset + i) >= p, so a stream
//                 continues where the previous call's left off, as Philox offsets do. Fused
//                 kernels evaluate this inline; the fallback materializes it with
//                 dropout_keep_mask().
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace crossdev::ops::portable_random {
// The inline functions are compiled into each per-capability copy of the fused CPU kernels too:
// each copy keeps its own, in its CPU_CAPABILITY namespace (ops/cpu/dispatch.h).
inline namespace CPU_CAPABILITY {

constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ULL;

constexpr std::uint64_t mix64(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Uniform in [0, 1): exactly representable multiples of 2^-53.
constexpr double uniform01(std::uint64_t key, std::uint64_t counter) noexcept {
  return static_cast<double>(mix64(key + (counter + 1) * kGolden) >> 11) * 0x1.0p-53;
}

// The dropout rule uniform01(key, i) >= p as an integer compare, for kernels that decide many
// elements at once: uniform01 is m * 2^-53 with m = mix64(...) >> 11 < 2^53, and p * 2^53 only
// shifts p's exponent, so m * 2^-53 >= p iff m >= ceil(p * 2^53) for every integer m. p <= 0
// keeps everything (0), p >= 1 and NaN keep nothing (2^53, above every m), as the double compare
// does. impl/ops/cuda/launch.cuh ports the same rule; test_portable_random.cpp checks it
// against uniform01 >= p.
constexpr std::uint64_t kDropAll = std::uint64_t{1} << 53;
inline std::uint64_t dropout_threshold(double p) noexcept {
  if (!(p > 0.0)) return p <= 0.0 ? 0 : kDropAll;  // NaN compares false: nothing kept
  if (p >= 1.0) return kDropAll;
  const double scaled = p * 0x1.0p53;
  const auto whole = static_cast<std::uint64_t>(scaled);
  return static_cast<double>(whole) == scaled ? whole : whole + 1;
}
constexpr bool dropout_keep(std::uint64_t key, std::uint64_t counter, std::uint64_t threshold) noexcept {
  return (mix64(key + (counter + 1) * kGolden) >> 11) >= threshold;
}

}  // namespace CPU_CAPABILITY

// FNV-1a over the parts (separated so {"ab","c"} != {"a","bc"}), then mixed with the seed.
std::uint64_t stream_key(std::initializer_list<std::string_view> parts, std::uint64_t seed) noexcept;
std::uint64_t dropout_key(std::uint64_t seed) noexcept;

// float64 CPU tensor of `sizes`, element i = lo + (hi - lo) * uniform01(key, i), row-major.
at::Tensor uniform_tensor(std::uint64_t key, at::IntArrayRef sizes, double lo, double hi);

// Bool tensor on `device`: true where the element survives dropout with probability p, for the
// stream (seed, offset): element i is decided by counter offset + i.
at::Tensor dropout_keep_mask(std::uint64_t seed, std::uint64_t offset, at::IntArrayRef sizes, double p,
                             c10::Device device);

// Survivor multiplier 1 / (1 - p); 0 for p >= 1 (everything dropped, as torch.dropout does).
inline namespace CPU_CAPABILITY {
inline double dropout_survivor_scale(double p) noexcept { return p < 1.0 ? 1.0 / (1.0 - p) : 0.0; }
}  // namespace CPU_CAPABILITY

}  // namespace crossdev::ops::portable_random
