#pragma once
// Statistical and structural checks of a dropout output, without trusting the mask generator.
//
// For out = scale * dropout(x + bias, p) + residual every element must be one of
//     kept:    scale * (x + bias) / (1 - p) + residual
//     dropped: residual
// (within the comparison tolerance; an element close to both is "ambiguous" and counts as
// neither), and the fraction kept must stay within `max_sigmas` binomial standard deviations
// of 1 - p:  |kept - n (1 - p)| <= max_sigmas * sqrt(n p (1 - p)),  n = kept + dropped.
// Reproducibility for a seed is checked by the caller (same call, bitwise-equal output).
#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "parity/tolerance.h"

namespace crossdev::parity {

struct DropoutCheck {
  bool pass = false;
  std::string reason;  // "" when it passed
  std::int64_t total = 0, kept = 0, dropped = 0, ambiguous = 0, unexplained = 0;
  std::vector<std::int64_t> first_unexplained_index;
  double keep_rate = 0.0;           // kept / (kept + dropped); 0 when nothing was classified
  double expected_keep_rate = 0.0;  // 1 - p
  double deviation_sigmas = 0.0;    // |kept - n (1 - p)| / sqrt(n p (1 - p))
  std::string summary() const;
};

// True when `kept` successes out of `n` trials are within max_sigmas standard deviations of a
// Binomial(n, keep_probability) mean. Always true for n = 0.
bool within_binomial_bound(std::int64_t kept, std::int64_t n, double keep_probability, double max_sigmas) noexcept;

// `out` in the dtype under test; `kept_value` and `dropped_value` the two admissible values
// per element (any dtype/device, same shape; rounded to out's dtype before comparing, as the
// golden reference is). 0 < p < 1.
DropoutCheck check_dropout(const at::Tensor& out, const at::Tensor& kept_value, const at::Tensor& dropped_value, double p,
                           const Tolerance& tolerance, double max_sigmas = 5.0);

}  // namespace crossdev::parity
