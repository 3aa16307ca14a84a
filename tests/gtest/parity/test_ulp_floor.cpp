// The floored ULP error (docs/parity.md, "ULP error"): its floor, its value on either side of
// the floor, and the bound it exists for: no element that the comparator's verdict accepts shows
// 2^(mantissa bits) ulps or more (rtol <= 1/5). The bound is checked on every finite float16 and
// bfloat16 value and on every binade of float32 and float64, at the default tolerances and at
// the extremes the proof allows; the same data under the unfloored figure must break it, or the
// data would not be exercising the floor. numpy checks the figure independently
// (tests/python/ops/test_parity_ulp_floor.py).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "parity/comparator.h"
#include "parity/tolerance.h"
#include "parity/ulp.h"

namespace crossdev::parity {
namespace {

constexpr double kDblMax = std::numeric_limits<double>::max();

TEST(UlpFloor, IsAtolOverRtolWithRtolAtLeastEpsilon) {
  EXPECT_EQ(ulp_floor(1.3e-6, 1e-5, float_format(at::kFloat)), 1e-5 / 1.3e-6);  // ~7.69
  EXPECT_EQ(ulp_floor(1e-3, 1e-5, float_format(at::kHalf)), 1e-5 / 1e-3);       // 0.01
  EXPECT_EQ(ulp_floor(1.6e-2, 1e-5, float_format(at::kBFloat16)), 1e-5 / 1.6e-2);
  EXPECT_EQ(ulp_floor(1e-7, 1e-7, float_format(at::kDouble)), 1.0);
  // A rtol below the dtype's epsilon (or 0: a pure atol criterion) counts as epsilon: the floor is
  // the magnitude whose ulp is about atol.
  EXPECT_EQ(ulp_floor(0.0, 1e-3, float_format(at::kHalf)), 1e-3 / std::ldexp(1.0, -10));
  EXPECT_EQ(ulp_floor(1e-9, 1e-3, float_format(at::kFloat)), 1e-3 / std::ldexp(1.0, -23));
  // No atol, no floor: the unfloored figure (exact comparisons, rtol = atol = 0, included).
  EXPECT_EQ(ulp_floor(1e-3, 0.0, float_format(at::kHalf)), 0.0);
  EXPECT_EQ(ulp_floor(0.0, 0.0, float_format(at::kFloat)), 0.0);
  EXPECT_EQ(ulp_floor(1e-3, std::nan(""), float_format(at::kFloat)), 0.0);
  EXPECT_EQ(ulp_floor(1e-3, std::numeric_limits<double>::infinity(), float_format(at::kFloat)), kDblMax);
  EXPECT_EQ(ulp_floor(1e-3, 1.0, float_format(at::kInt)), 0.0);  // integers have no ulp to floor
}

TEST(UlpFloor, BelowTheFloorErrorsCountInUlpsOfTheFloor) {
  // float32, floor 7.69: ulp(7.69) = 2^-21. e = 0 and e = 1e-20 both measure in it.
  const double floor = ulp_floor(1.3e-6, 1e-5, float_format(at::kFloat));
  EXPECT_EQ(ulp_error(1e-5, 0.0, at::kFloat, floor), static_cast<double>(1e-5f) / std::ldexp(1.0, -21));
  const double e = static_cast<float>(1e-20);
  EXPECT_EQ(ulp_error(e + 1e-6, e, at::kFloat, floor),
            std::fabs(static_cast<double>(static_cast<float>(e + 1e-6)) - e) / std::ldexp(1.0, -21));
  // At and above the floor it is the ulp error of e itself: e = 8 has ulp 2^-20.
  EXPECT_EQ(ulp_error(8.0 + std::ldexp(1.0, -20), 8.0, at::kFloat, floor), 1.0);
  EXPECT_EQ(ulp_error(8.0 + std::ldexp(1.0, -20), 8.0, at::kFloat, 0.0), 1.0);
  // The kind of pair behind the report's bfloat16 "max_ulp 5.7e32" on a passing case: an error of
  // ~6e-8 against a zero reference is 2^109 ulps of zero, and 2^-6 ulps of the floor 6.25e-4
  // (in [2^-11, 2^-10): ulp 2^-18).
  const double bf_floor = ulp_floor(1.6e-2, 1e-5, float_format(at::kBFloat16));
  EXPECT_EQ(ulp_error(std::ldexp(1.0, -24), 0.0, at::kBFloat16, 0.0), std::ldexp(1.0, 109));
  EXPECT_EQ(ulp_error(std::ldexp(1.0, -24), 0.0, at::kBFloat16, bf_floor), std::ldexp(1.0, -6));
  EXPECT_THROW(ulp_error(1.0, 1.0, at::kFloat, -1.0), std::invalid_argument);
  EXPECT_THROW(ulp_error(1.0, 1.0, at::kFloat, std::nan("")), std::invalid_argument);
}

TEST(UlpFloor, ComparisonRecordsItsFloorInTheSummary) {
  const Comparison c = compare(at::zeros({2}), at::zeros({2}));
  EXPECT_EQ(c.ulp_floor, 1e-5 / 1.3e-6);
  EXPECT_NE(c.summary().find(", max_ulp=0, ulp_floor=7.69230769 (rtol=1.3e-06, atol=1e-05)"), std::string::npos)
      << c.summary();
  EXPECT_EQ(compare(at::zeros({2}, at::kInt), at::zeros({2}, at::kInt)).ulp_floor, 0.0);
}

// Every finite value of a 16-bit float dtype, or, for float32/float64, +-m * 2^k for every
// exponent k of the dtype (subnormals included) and a few mantissas m; and zeros.
at::Tensor expected_values(at::ScalarType dtype) {
  if (dtype == at::kHalf || dtype == at::kBFloat16) {
    const at::Tensor all = at::arange(-32768, 32768, at::kInt).to(at::kShort).view(dtype);
    return all.masked_select(at::isfinite(all));
  }
  const bool f64 = dtype == at::kDouble;
  const int lowest = f64 ? -1074 : -149, highest = f64 ? 1023 : 127;
  std::vector<double> values{0.0, -0.0};
  for (int k = lowest; k <= highest; ++k)
    for (double m : {1.0, 1.25, 1.5, 1.75, 1.9999})
      for (double sign : {1.0, -1.0}) values.push_back(sign * std::ldexp(m, k));
  return at::tensor(values, at::kDouble).to(dtype);
}

struct Stressed {
  at::Tensor actual, expected;  // pairs the verdict accepts, in the dtype
};

// For each expected e: actual = e +- f * (atol + rtol |e|) rounded to the dtype, for factors f
// around 1 (the boundary the dtype-rounded verdict moves), kept where at::isclose accepts it.
Stressed passing_pairs(at::ScalarType dtype, const Tolerance& tol) {
  const at::Tensor e = expected_values(dtype);
  const at::Tensor e64 = e.to(at::kDouble);
  const at::Tensor allowed = tol.atol + tol.rtol * e64.abs();
  std::vector<at::Tensor> actual, expected;
  for (double f : {0.25, 0.5, 0.9, 0.99, 0.999, 1.0, 1.001, 1.01, 1.1}) {
    for (double sign : {1.0, -1.0}) {
      const at::Tensor a = (e64 + sign * f * allowed).to(dtype);
      const at::Tensor keep = at::isfinite(a) & at::isclose(a, e, tol.rtol, tol.atol);
      actual.push_back(a.masked_select(keep));
      expected.push_back(e.masked_select(keep));
    }
  }
  return {at::cat(actual), at::cat(expected)};
}

double max_unfloored_ulp(const Stressed& s) {
  const FloatFormat f = float_format(s.actual.scalar_type());
  const at::Tensor a = s.actual.to(at::kDouble).contiguous(), e = s.expected.to(at::kDouble).contiguous();
  const double *pa = a.data_ptr<double>(), *pe = e.data_ptr<double>();
  double worst = 0.0;
  for (std::int64_t i = 0; i < a.numel(); ++i)
    worst = std::max(worst, ulp_error_in(pa[i], pe[i], 0.0, f.mantissa_digits, f.min_exponent));
  return worst;
}

class PassingBound : public ::testing::TestWithParam<at::ScalarType> {};

TEST_P(PassingBound, NoPassingElementReaches2ToTheMantissaBits) {
  const at::ScalarType dtype = GetParam();
  const FloatFormat format = float_format(dtype);
  const double bound = std::ldexp(1.0, format.mantissa_digits - 1);  // 2^(mantissa bits)
  const Tolerance tolerances[] = {
      default_tolerance(dtype),
      {0.2, 0.0},     // the largest rtol the proof covers, no atol: the floor is 0
      {0.2, 1e-30},   // ... with a tiny atol (a subnormal or zero in the 16-bit dtypes)
      {0.2, 1.0},
      {0.0, 1e-3},    // a pure atol criterion: the floor is atol / eps
      {1e-12, 1e-6},  // a rtol below epsilon
      {1e-3, 0.0},
  };
  bool unfloored_breaks_it = false;
  for (const Tolerance& tol : tolerances) {
    const Stressed s = passing_pairs(dtype, tol);
    ASSERT_GT(s.actual.numel(), 1000) << tol.str();
    const Comparison c = compare(s.actual, s.expected, {tol});
    ASSERT_TRUE(c.pass) << c10::toString(dtype) << " " << c.summary();
    EXPECT_LT(c.max_ulp, bound) << c10::toString(dtype) << " " << c.summary();
    unfloored_breaks_it = unfloored_breaks_it || max_unfloored_ulp(s) >= bound;
  }
  EXPECT_TRUE(unfloored_breaks_it) << "the pairs never stress the floor: the bound above proves nothing";
}

INSTANTIATE_TEST_SUITE_P(Dtypes, PassingBound, ::testing::Values(at::kHalf, at::kBFloat16, at::kFloat, at::kDouble),
                         [](const auto& info) { return std::string(c10::toString(info.param)); });

}  // namespace
}  // namespace crossdev::parity
