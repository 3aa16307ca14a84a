#pragma once
// Builds the portable inputs of one (op, shape set, seed): float64 CPU values from the
// counter-based generator (portable_random.h) keyed by (op, shape set, seed, input name), then
// make_inputs casts them to the dtype under test and moves them to the device.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ops/op_spec.h"

namespace crossdev::ops {

class InputMaker {
 public:
  InputMaker(std::string op, std::string shape_set, std::uint64_t seed);

  // The returned references are valid until the next tensor is added (OpCall::tensors is a sorted
  // flat vector, named_values.h).
  // Uniform in [lo, hi).
  at::Tensor& uniform(const std::string& name, std::vector<std::int64_t> sizes, double lo = -1.0, double hi = 1.0);
  // Same distribution, delivered as a non-contiguous view: generated contiguous with dims a and b
  // swapped, transposed back after the move to the device.
  at::Tensor& uniform_transposed(const std::string& name, std::vector<std::int64_t> sizes, std::int64_t a,
                                 std::int64_t b, double lo = -1.0, double hi = 1.0);
  // Uniform values of `sizes`, delivered as a stride-0 broadcast view expanded to `target`.
  at::Tensor& uniform_expanded(const std::string& name, std::vector<std::int64_t> sizes,
                               std::vector<std::int64_t> target, double lo = -1.0, double hi = 1.0);
  // Bool tensor, true (masked) with probability p_true.
  at::Tensor& mask(const std::string& name, std::vector<std::int64_t> sizes, double p_true);
  // Per-row magnitudes 2^-k, k uniform in [0, max_exponent]: rows whose mean square is near eps.
  void scale_rows_by_powers_of_two(const std::string& name, int max_exponent);
  void scalar(const std::string& name, double value) { call_.scalars[name] = value; }
  void training(bool on) { call_.training = on; }

  // Casts floating tensors to `dtype`, moves everything to `device`, applies the transposes. A
  // call in training mode gets generator_stream::harness_generator(device, seed): one random
  // stream per seed on every device.
  OpCall finish(at::ScalarType dtype, c10::Device device) &&;

 private:
  std::uint64_t key(const std::string& name, const char* purpose = "values") const;
  std::string op_;
  std::string shape_set_;
  std::uint64_t seed_;
  OpCall call_;
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> transposes_;
  std::map<std::string, std::vector<std::int64_t>> expansions_;
};

}  // namespace crossdev::ops
