#pragma once
// Default closeness tolerances per dtype: the table of torch.testing.assert_close
// (torch/testing/_comparison.py, _DTYPE_PRECISIONS), so a crossdev verdict and an
// assert_close verdict agree when neither overrides them.
#include <string>

#include <c10/core/ScalarType.h>

namespace crossdev::parity {

struct Tolerance {
  double rtol = 0.0;
  double atol = 0.0;
  std::string str() const;  // "rtol=0.001, atol=1e-05"
};

// (0, 0) for dtypes without an entry (integers, bool): they compare exactly, as in torch.
Tolerance default_tolerance(c10::ScalarType dtype) noexcept;

// The loosest of both dtypes' defaults, as torch.testing's default_tolerances(actual, expected).
Tolerance default_tolerance(c10::ScalarType actual, c10::ScalarType expected) noexcept;

}  // namespace crossdev::parity
