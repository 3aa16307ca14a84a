#pragma once
// Small helpers for the ops tests: an assert_close-style comparison (torch.testing defaults per
// dtype; the full comparator lives in conformance/parity) and the (op, dtype, shape set) grid.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "ops/op_registry.h"

namespace crossdev::ops::testing {

struct Tolerance {
  double rtol;
  double atol;
};

// torch.testing.assert_close defaults.
inline Tolerance default_tolerance(at::ScalarType dtype) {
  switch (dtype) {
    case at::kHalf: return {1e-3, 1e-5};
    case at::kBFloat16: return {1.6e-2, 1e-5};
    case at::kDouble: return {1e-7, 1e-7};
    default: return {1.3e-6, 1e-5};
  }
}

// |actual - expected| <= atol + rtol * |expected| elementwise (computed in float64), same shape
// and dtype. Returns "" when close, else a description of the worst element.
inline std::string close_mismatch(const at::Tensor& actual, const at::Tensor& expected, Tolerance tol) {
  if (actual.sizes() != expected.sizes()) {
    return "shape mismatch: " + c10::str(actual.sizes()) + " vs " + c10::str(expected.sizes());
  }
  if (actual.scalar_type() != expected.scalar_type()) {
    return std::string("dtype mismatch: ") + c10::toString(actual.scalar_type()) + " vs " +
           c10::toString(expected.scalar_type());
  }
  if (actual.numel() == 0) return "";
  const at::Tensor a = actual.detach().to(at::kCPU, at::kDouble);
  const at::Tensor e = expected.detach().to(at::kCPU, at::kDouble);
  const at::Tensor diff = (a - e).abs();
  const at::Tensor allowed = e.abs() * tol.rtol + tol.atol;
  // NaN in either side counts as a mismatch (equal_nan=False).
  const at::Tensor bad = diff.gt(allowed).logical_or(a.isnan()).logical_or(e.isnan());
  const std::int64_t count = bad.sum().item<std::int64_t>();
  if (count == 0) return "";
  const std::int64_t worst = (diff - allowed).nan_to_num(1e300).flatten().argmax().item<std::int64_t>();
  return std::to_string(count) + " of " + std::to_string(a.numel()) + " elements differ; worst at flat index " +
         std::to_string(worst) + ": " + std::to_string(a.flatten()[worst].item<double>()) + " vs " +
         std::to_string(e.flatten()[worst].item<double>());
}

inline std::vector<at::ScalarType> all_dtypes() { return {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16}; }

inline std::string dtype_name(at::ScalarType dtype) {
  switch (dtype) {
    case at::kHalf: return "float16";
    case at::kBFloat16: return "bfloat16";
    case at::kDouble: return "float64";
    default: return "float32";
  }
}

// One (op, shape set); tests loop over the dtypes inside (SCOPED_TRACE names the dtype), which
// keeps the CTest process count, and so LibTorch start-ups, down.
struct OpCase {
  std::string op;
  std::string shape_set;
};

inline void PrintTo(const OpCase& c, std::ostream* os) { *os << c.op << "/" << c.shape_set; }

inline std::vector<OpCase> all_cases(bool include_large) {
  std::vector<OpCase> cases;
  for (const OpSpec* op : all_ops()) {
    for (const std::string& set : op->shape_sets()) {
      if (!include_large && set == "large") continue;
      cases.push_back({op->name(), set});
    }
  }
  return cases;
}

inline std::string case_name(const ::testing::TestParamInfo<OpCase>& info) {
  return info.param.op + "_" + info.param.shape_set;
}

}  // namespace crossdev::ops::testing
