#include "parity/tolerance.h"

#include <algorithm>
#include <cstdio>

namespace crossdev::parity {
namespace {

struct DefaultTolerance {
  c10::ScalarType dtype;
  Tolerance tolerance;  // {rtol, atol}
};

// torch/testing/_comparison.py, _DTYPE_PRECISIONS (torch 2.13). Quantized dtypes there reuse
// float32's entry; crossdev does not compare quantized tensors.
const DefaultTolerance kDefaultTolerances[] = {
    {c10::ScalarType::Half, {1e-3, 1e-5}},
    {c10::ScalarType::BFloat16, {1.6e-2, 1e-5}},
    {c10::ScalarType::Float, {1.3e-6, 1e-5}},
    {c10::ScalarType::Double, {1e-7, 1e-7}},
    {c10::ScalarType::ComplexHalf, {1e-3, 1e-5}},
    {c10::ScalarType::ComplexFloat, {1.3e-6, 1e-5}},
    {c10::ScalarType::ComplexDouble, {1e-7, 1e-7}},
};

}  // namespace

std::string Tolerance::str() const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "rtol=%g, atol=%g", rtol, atol);
  return buf;
}

Tolerance default_tolerance(c10::ScalarType dtype) noexcept {
  for (const auto& row : kDefaultTolerances)
    if (row.dtype == dtype) return row.tolerance;
  return {};
}

Tolerance default_tolerance(c10::ScalarType actual, c10::ScalarType expected) noexcept {
  const Tolerance a = default_tolerance(actual), e = default_tolerance(expected);
  return {std::max(a.rtol, e.rtol), std::max(a.atol, e.atol)};
}

}  // namespace crossdev::parity
