#pragma once
// Numerical comparison with torch.testing.assert_close semantics.
//
// The verdict is assert_close's: shapes must match; dtypes must match unless check_dtype is
// off (then both are promoted with torch.promote_types); values are close when
//     |actual - expected| <= atol + rtol * |expected|
// evaluated by at::isclose in the compared dtype, exactly as assert_close does, so that a
// boundary case rounds the same way in both. Non-finite values must match: an infinity only
// equals the infinity of the same sign, a NaN only equals a NaN when equal_nan is set.
// Devices are not compared: both sides are copied to the CPU (assert_close with
// check_device=False), because comparing one device with another is the point of parity.
//
// Beyond the verdict, every comparison measures the whole tensor (not only the mismatches)
// in float64: max abs error, max rel error, max ULP error (see ulp.h: in ulps of the compared
// dtype, floored by the tolerance), the mismatch count and the first mismatching index.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "parity/tolerance.h"

namespace crossdev::parity {

struct CompareOptions {
  std::optional<Tolerance> tolerance;  // default: default_tolerance(actual dtype, expected dtype)
  bool equal_nan = false;
  bool check_dtype = true;
};

struct Comparison {
  bool pass = false;
  std::string reason;        // why it failed ("" when it passed)
  Tolerance tolerance;       // what was applied
  std::int64_t total = 0;    // elements compared
  std::int64_t mismatches = 0;
  std::vector<std::int64_t> first_mismatch_index;  // multi-dimensional; empty for a 0-d tensor or none
  double first_mismatch_actual = 0.0;              // the values there (float64), when mismatches > 0
  double first_mismatch_expected = 0.0;
  // Over all elements: 0 for identical pairs (equal infinities, NaN pairs under equal_nan),
  // +inf where a non-finite value meets anything else; rel is inf where expected is 0 and
  // actual is not.
  double max_abs = 0.0;
  double max_rel = 0.0;
  double max_ulp = 0.0;      // max |a - e| / ulp(max(|e|, ulp_floor)) (ulp.h); integers: max |a - e|
  double ulp_floor = 0.0;    // ulp_floor(tolerance, compared dtype): atol / max(rtol, eps); 0 for integers

  std::string index_str() const;  // "[0, 3]"
  std::string summary() const;    // one line for reports
};

// Throws std::invalid_argument for inputs assert_close would compare but crossdev does not
// (complex, quantized, sparse layouts); everything else is a verdict with a reason.
Comparison compare(const at::Tensor& actual, const at::Tensor& expected, const CompareOptions& options = {});

}  // namespace crossdev::parity
