#include "ops/portable_random.h"

#include <ATen/Functions.h>

namespace crossdev::ops::portable_random {

std::uint64_t stream_key(std::initializer_list<std::string_view> parts, std::uint64_t seed) noexcept {
  std::uint64_t hash = 0xCBF29CE484222325ULL;  // FNV-1a offset basis
  for (std::string_view part : parts) {
    for (unsigned char c : part) {
      hash = (hash ^ c) * 0x100000001B3ULL;
    }
    hash = (hash ^ 0xFFu) * 0x100000001B3ULL;  // part separator: not a byte of valid UTF-8
  }
  return mix64(hash ^ mix64(seed + kGolden));
}

std::uint64_t dropout_key(std::uint64_t seed) noexcept { return stream_key({"dropout"}, seed); }

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
