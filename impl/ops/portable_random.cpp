#include "ops/portable_random.h"

#include <ATen/Functions.h>

namespace crossdev::ops::portable_random {

namespace {
constexpr std::uint64_t kFnvOffsetBasis = 0xCBF29CE484222325ULL;
constexpr std::uint64_t kFnvPrime = 0x100000001B3ULL;

// FNV-1a over one part, then the separator (0xFF: not a byte of valid UTF-8).
constexpr std::uint64_t fnv_part(std::uint64_t hash, std::string_view part) noexcept {
  for (unsigned char c : part) hash = (hash ^ c) * kFnvPrime;
  return (hash ^ 0xFFu) * kFnvPrime;
}

constexpr std::uint64_t keyed(std::uint64_t parts_hash, std::uint64_t seed) noexcept {
  return mix64(parts_hash ^ mix64(seed + kGolden));
}

// dropout_key's parts hashed once, at compile time: a dropout call keys its stream per call.
constexpr std::uint64_t kDropoutPartsHash = fnv_part(kFnvOffsetBasis, "dropout");
}  // namespace

std::uint64_t stream_key(std::initializer_list<std::string_view> parts, std::uint64_t seed) noexcept {
  std::uint64_t hash = kFnvOffsetBasis;
  for (std::string_view part : parts) hash = fnv_part(hash, part);
  return keyed(hash, seed);
}

std::uint64_t dropout_key(std::uint64_t seed) noexcept { return keyed(kDropoutPartsHash, seed); }

at::Tensor uniform_tensor(std::uint64_t key, at::IntArrayRef sizes, double lo, double hi) {
  at::Tensor out = at::empty(sizes, at::TensorOptions().dtype(at::kDouble));
  double* data = out.data_ptr<double>();
  const double width = hi - lo;
  for (std::int64_t i = 0, n = out.numel(); i < n; ++i) {
    data[i] = lo + width * uniform01(key, static_cast<std::uint64_t>(i));
  }
  return out;
}

at::Tensor dropout_keep_mask(std::uint64_t seed, std::uint64_t offset, at::IntArrayRef sizes, double p,
                             c10::Device device) {
  at::Tensor keep = at::empty(sizes, at::TensorOptions().dtype(at::kBool));
  bool* data = keep.data_ptr<bool>();
  const std::uint64_t key = dropout_key(seed);
  const std::uint64_t threshold = dropout_threshold(p);  // uniform01(key, i) >= p, as an integer compare
  for (std::int64_t i = 0, n = keep.numel(); i < n; ++i) {
    data[i] = dropout_keep(key, offset + static_cast<std::uint64_t>(i), threshold);
  }
  return keep.to(device);
}

}  // namespace crossdev::ops::portable_random
