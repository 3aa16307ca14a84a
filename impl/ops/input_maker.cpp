#include "ops/input_maker.h"

#include <ATen/Functions.h>

#include <cmath>

#include "ops/generator_stream.h"
#include "ops/portable_random.h"

namespace crossdev::ops {

InputMaker::InputMaker(std::string op, std::string shape_set, std::uint64_t seed)
    : op_(std::move(op)), shape_set_(std::move(shape_set)), seed_(seed) {
}

std::uint64_t InputMaker::key(const std::string& name, const char* purpose) const {
  return portable_random::stream_key({op_, shape_set_, name, purpose}, seed_);
}

at::Tensor& InputMaker::uniform(const std::string& name, std::vector<std::int64_t> sizes, double lo, double hi) {
  at::Tensor& slot = call_.tensors[name];
  slot = portable_random::uniform_tensor(key(name), sizes, lo, hi);
  return slot;
}

at::Tensor& InputMaker::uniform_transposed(const std::string& name, std::vector<std::int64_t> sizes,
                                           std::int64_t a, std::int64_t b, double lo, double hi) {
  std::swap(sizes.at(static_cast<std::size_t>(a)), sizes.at(static_cast<std::size_t>(b)));
  transposes_[name] = {a, b};
  return uniform(name, std::move(sizes), lo, hi);
}

at::Tensor& InputMaker::uniform_expanded(const std::string& name, std::vector<std::int64_t> sizes,
                                         std::vector<std::int64_t> target, double lo, double hi) {
  expansions_[name] = std::move(target);
  return uniform(name, std::move(sizes), lo, hi);
}

at::Tensor& InputMaker::mask(const std::string& name, std::vector<std::int64_t> sizes, double p_true) {
  at::Tensor& slot = call_.tensors[name];
  slot = portable_random::uniform_tensor(key(name), sizes, 0.0, 1.0).lt(p_true);
  return slot;
}

void InputMaker::scale_rows_by_powers_of_two(const std::string& name, int max_exponent) {
  at::Tensor& x = call_.tensors.at(name);
  if (x.numel() == 0) return;
  const std::int64_t row = x.size(-1);
  const at::Tensor u = portable_random::uniform_tensor(key(name, "row_scale"), {x.numel() / row}, 0.0, 1.0);
  const double* up = u.data_ptr<double>();
  at::Tensor rows = x.view({-1, row});
  for (std::int64_t r = 0; r < rows.size(0); ++r) {
    // ldexp is exact, so the scaled values are still the same bits everywhere.
    const int k = static_cast<int>(up[r] * (max_exponent + 1));
    rows[r].mul_(std::ldexp(1.0, -k));
  }
}

OpCall InputMaker::finish(at::ScalarType dtype, c10::Device device) && {
  for (auto& [name, tensor] : call_.tensors) {
    at::Tensor converted = tensor.is_floating_point() ? tensor.to(dtype) : tensor;
    converted = converted.to(device);
    if (auto it = transposes_.find(name); it != transposes_.end()) {
      converted = converted.transpose(it->second.first, it->second.second);
    }
    if (auto it = expansions_.find(name); it != expansions_.end()) converted = converted.expand(it->second);
    tensor = converted;
  }
  // A random call's stream: the same on every device for one seed.
  if (call_.training) call_.generator = generator_stream::harness_generator(device, seed_);
  return std::move(call_);
}

}  // namespace crossdev::ops
