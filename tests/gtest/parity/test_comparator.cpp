// The comparator against hand-derived verdicts and metrics. Verdict parity with
// torch.testing.assert_close on thousands of random pairs is proven by
// tests/python/ops/test_parity_assert_close.py; these cases pin the semantics in C++.
#include <cmath>
#include <limits>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "parity/comparator.h"
#include "util/dtype_names.h"
#include "parity/tolerance.h"
#include "parity/ulp.h"

namespace crossdev::parity {
namespace {

at::Tensor f32(std::vector<float> values) { return at::tensor(values, at::kFloat); }

TEST(DefaultTolerance, MatchesTorchTestingTable) {
  // torch/testing/_comparison.py _DTYPE_PRECISIONS: {dtype: (rtol, atol)}.
  EXPECT_EQ(default_tolerance(at::kHalf).rtol, 1e-3);
  EXPECT_EQ(default_tolerance(at::kHalf).atol, 1e-5);
  EXPECT_EQ(default_tolerance(at::kBFloat16).rtol, 1.6e-2);
  EXPECT_EQ(default_tolerance(at::kBFloat16).atol, 1e-5);
  EXPECT_EQ(default_tolerance(at::kFloat).rtol, 1.3e-6);
  EXPECT_EQ(default_tolerance(at::kFloat).atol, 1e-5);
  EXPECT_EQ(default_tolerance(at::kDouble).rtol, 1e-7);
  EXPECT_EQ(default_tolerance(at::kDouble).atol, 1e-7);
  EXPECT_EQ(default_tolerance(at::kInt).rtol, 0.0);
  EXPECT_EQ(default_tolerance(at::kInt).atol, 0.0);
}

TEST(DefaultTolerance, PairTakesTheLoosest) {
  const Tolerance t = default_tolerance(at::kFloat, at::kHalf);
  EXPECT_EQ(t.rtol, 1e-3);
  EXPECT_EQ(t.atol, 1e-5);
}

TEST(DtypeNames, RoundTripAndRejectUnknown) {
  for (const char* name : {"float16", "bfloat16", "float32", "float64"}) {
    const auto dtype = matrix_float_dtype_from_name(name);
    ASSERT_TRUE(dtype.has_value()) << name;
    EXPECT_STREQ(dtype_name(*dtype), name);
  }
  EXPECT_FALSE(matrix_float_dtype_from_name("float").has_value());
  EXPECT_FALSE(matrix_float_dtype_from_name("fp16").has_value());
  EXPECT_FALSE(matrix_float_dtype_from_name("int64").has_value());  // a dtype, but not a matrix float
}

TEST(Compare, BoundaryOfTheClosenessInequality) {
  const Tolerance tol{1e-3, 1e-3};
  // allowed error at expected = 2: 1e-3 + 1e-3 * 2 = 3e-3 (float64, no rounding surprises)
  const auto expected = at::tensor({2.0}, at::kDouble);
  EXPECT_TRUE(compare(at::tensor({2.0029}, at::kDouble), expected, {tol}).pass);
  EXPECT_FALSE(compare(at::tensor({2.0031}, at::kDouble), expected, {tol}).pass);
  EXPECT_TRUE(compare(at::tensor({1.9971}, at::kDouble), expected, {tol}).pass);
  EXPECT_FALSE(compare(at::tensor({1.9969}, at::kDouble), expected, {tol}).pass);
}

TEST(Compare, RelativeToleranceScalesWithExpectedNotActual) {
  const Tolerance tol{0.5, 0.0};
  // |10 - 20| = 10 <= 0.5 * 20 passes; swapped, 10 > 0.5 * 10 fails: the inequality is asymmetric.
  EXPECT_TRUE(compare(f32({10}), f32({20}), {tol}).pass);
  EXPECT_FALSE(compare(f32({20}), f32({10}), {tol}).pass);
}

TEST(Compare, CountsMismatchesAndFindsTheFirstInRowMajorOrder) {
  auto expected = at::zeros({3, 4}, at::kFloat);
  auto actual = expected.clone();
  actual.index_put_({2, 3}, 1.0);
  actual.index_put_({1, 2}, -0.5);
  const Comparison c = compare(actual, expected);
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.total, 12);
  EXPECT_EQ(c.mismatches, 2);
  EXPECT_EQ(c.first_mismatch_index, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(c.first_mismatch_actual, -0.5);
  EXPECT_EQ(c.first_mismatch_expected, 0.0);
  EXPECT_EQ(c.max_abs, 1.0);
  EXPECT_TRUE(std::isinf(c.max_rel));  // expected is 0 where actual is not
  EXPECT_NE(c.reason.find("Mismatched elements: 2 / 12"), std::string::npos) << c.reason;
  EXPECT_NE(c.reason.find("[1, 2]"), std::string::npos) << c.reason;
}

TEST(Compare, FirstMismatchIsInLogicalOrderForNonContiguousInputs) {
  auto base = at::zeros({4, 3}, at::kFloat);
  base.index_put_({0, 2}, 7.0);  // logical index [2, 0] of the transpose
  const auto actual = base.t();  // 3x4, non-contiguous
  ASSERT_FALSE(actual.is_contiguous());
  const Comparison c = compare(actual, at::zeros({3, 4}, at::kFloat));
  EXPECT_EQ(c.first_mismatch_index, (std::vector<std::int64_t>{2, 0}));
  EXPECT_EQ(c.first_mismatch_actual, 7.0);
}

TEST(Compare, MeasuresEveryElementNotOnlyMismatches) {
  const auto expected = f32({1.0f, 4.0f});
  const auto actual = f32({1.0f + 4e-6f, 4.0f});  // within the float32 default tolerance
  const Comparison c = compare(actual, expected);
  EXPECT_TRUE(c.pass) << c.summary();
  EXPECT_NEAR(c.max_abs, 4e-6, 1e-7);
  EXPECT_NEAR(c.max_rel, 4e-6, 1e-7);
  // In ulps of the float32 default floor 1e-5 / 1.3e-6 = 7.69 (ulp 2^-21), not of 1.0 (2^-23).
  EXPECT_EQ(c.ulp_floor, 1e-5 / 1.3e-6);
  EXPECT_EQ(c.max_ulp, c.max_abs / std::ldexp(1.0, -21));
  EXPECT_NEAR(c.max_ulp, 4e-6 / std::ldexp(1.0, -21), 0.5);  // ~8.4, plus float32's rounding of 1 + 4e-6
}

TEST(Compare, InfinitiesMustMatchInSign) {
  const float inf = std::numeric_limits<float>::infinity();
  const float big = std::numeric_limits<float>::max();
  EXPECT_TRUE(compare(f32({inf, -inf}), f32({inf, -inf})).pass);
  EXPECT_FALSE(compare(f32({inf}), f32({-inf})).pass);
  // No tolerance is loose enough to make max finite equal infinity.
  const Comparison c = compare(f32({big}), f32({inf}), {Tolerance{1.0, 1e30}});
  EXPECT_FALSE(c.pass);
  EXPECT_TRUE(std::isinf(c.max_abs));
}

TEST(Compare, NanEqualsNanOnlyWithEqualNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(compare(f32({nan}), f32({nan})).pass);
  CompareOptions opts;
  opts.equal_nan = true;
  const Comparison c = compare(f32({nan, 1.0f}), f32({nan, 1.0f}), opts);
  EXPECT_TRUE(c.pass);
  EXPECT_EQ(c.max_abs, 0.0);
  EXPECT_EQ(c.max_ulp, 0.0);
  EXPECT_FALSE(compare(f32({nan}), f32({1.0f}), opts).pass);
}

TEST(Compare, ShapeMismatchIsAFailureWithAReason) {
  const Comparison c = compare(at::zeros({2, 3}), at::zeros({3, 2}));
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.reason, "The values for attribute 'shape' do not match: [2, 3] != [3, 2].");
}

TEST(Compare, DtypeMismatchFailsUnlessDisabledThenPromotes) {
  const auto a = at::ones({2}, at::kFloat), e = at::ones({2}, at::kDouble);
  const Comparison strict = compare(a, e);
  EXPECT_FALSE(strict.pass);
  EXPECT_NE(strict.reason.find("'dtype'"), std::string::npos);
  CompareOptions loose;
  loose.check_dtype = false;
  EXPECT_TRUE(compare(a, e, loose).pass);
  EXPECT_EQ(compare(a, e, loose).tolerance.rtol, 1.3e-6);  // loosest of float32 and float64
}

TEST(Compare, EmptyAndZeroDimTensors) {
  const Comparison empty = compare(at::zeros({0, 5}), at::zeros({0, 5}));
  EXPECT_TRUE(empty.pass);
  EXPECT_EQ(empty.total, 0);
  const Comparison scalar = compare(at::scalar_tensor(1.0), at::scalar_tensor(2.0));
  EXPECT_FALSE(scalar.pass);
  EXPECT_TRUE(scalar.first_mismatch_index.empty());
  EXPECT_EQ(scalar.mismatches, 1);
}

TEST(Compare, Float16VerdictRoundsInTheDtypeLikeAssertClose) {
  // e = 1.9423828125, a = e + 2 ulps. In float64, |a - e| = 1.953125e-3 exceeds
  // 1e-5 + 1e-3 * |e| = 1.9524e-3, but assert_close evaluates the inequality in float16, where
  // the allowed error rounds up to 1.953125e-3, and accepts the pair. So must we.
  const double e = 1.9423828125, a = 1.9443359375;
  ASSERT_GT(a - e, 1e-5 + 1e-3 * e);
  const Comparison c = compare(at::full({1}, a, at::kHalf), at::full({1}, e, at::kHalf));
  EXPECT_TRUE(c.pass) << c.summary();
  EXPECT_EQ(c.max_ulp, 2.0);
  EXPECT_EQ(c.max_abs, a - e);
}

TEST(Compare, RejectsWhatItDoesNotCompare) {
  EXPECT_THROW(compare(at::zeros({2}, at::kComplexFloat), at::zeros({2}, at::kComplexFloat)), std::invalid_argument);
  EXPECT_THROW(compare(at::Tensor(), at::zeros({2})), std::invalid_argument);
}

TEST(Ulp, OrderedIntegerDistance) {
  EXPECT_EQ(ulp_distance(1.0, std::nextafter(1.0f, 2.0f), at::kFloat), 1u);
  EXPECT_EQ(ulp_distance(0.0, -0.0, at::kFloat), 0u);
  const double tiny = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(ulp_distance(tiny, -tiny, at::kFloat), 2u);  // across zero: 1 step to 0, 1 step beyond
  EXPECT_EQ(ulp_distance(1.0, 1.0009765625, at::kHalf), 1u);
  EXPECT_EQ(ulp_distance(1.0, 1.0078125, at::kBFloat16), 1u);
  EXPECT_EQ(ulp_distance(1.0, std::nextafter(1.0, 2.0), at::kDouble), 1u);
  EXPECT_EQ(ulp_distance(65504.0, std::numeric_limits<double>::infinity(), at::kHalf), 1u);  // max half -> inf
  // 1.0 and 2.0 are one binade apart: 2^23 float32 steps.
  EXPECT_EQ(ulp_distance(1.0, 2.0, at::kFloat), 1u << 23);
  // Widest span: -inf to +inf in float64 does not overflow.
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(ulp_distance(-inf, inf, at::kDouble), 2 * 0x7FF0000000000000ULL);
  EXPECT_THROW(ulp_distance(std::nan(""), 1.0, at::kFloat), std::invalid_argument);
  EXPECT_THROW(ulp_distance(1.0, 1.0, at::kInt), std::invalid_argument);
}


// max_ulp is |a - e| / ulp(max(|e|, floor)) (docs/parity.md; the floor: test_ulp_floor.cpp): ulp of
// 0 and of subnormals is the smallest normal's ulp, per dtype.
TEST(Ulp, UlpOfEachDtype) {
  EXPECT_EQ(ulp_of(1.0, at::kDouble), std::ldexp(1.0, -52));
  EXPECT_EQ(ulp_of(1.0, at::kFloat), std::ldexp(1.0, -23));
  EXPECT_EQ(ulp_of(1.0, at::kHalf), std::ldexp(1.0, -10));
  EXPECT_EQ(ulp_of(1.0, at::kBFloat16), std::ldexp(1.0, -7));
  EXPECT_EQ(ulp_of(-3.0, at::kFloat), std::ldexp(1.0, -22));
  EXPECT_EQ(ulp_of(0.0, at::kDouble), std::ldexp(1.0, -1074));
  EXPECT_EQ(ulp_of(0.0, at::kFloat), std::ldexp(1.0, -149));
  EXPECT_EQ(ulp_of(-0.0, at::kHalf), std::ldexp(1.0, -24));
  EXPECT_EQ(ulp_of(0.0, at::kBFloat16), std::ldexp(1.0, -133));
  // Subnormals and the smallest normal share zero's ulp.
  EXPECT_EQ(ulp_of(std::numeric_limits<double>::denorm_min() * 5, at::kDouble), std::ldexp(1.0, -1074));
  EXPECT_EQ(ulp_of(std::numeric_limits<float>::min(), at::kFloat), std::ldexp(1.0, -149));
  EXPECT_EQ(ulp_of(std::ldexp(1.0, -20), at::kHalf), std::ldexp(1.0, -24));  // a float16 subnormal
  EXPECT_TRUE(std::isnan(ulp_of(std::numeric_limits<double>::infinity(), at::kFloat)));
  EXPECT_THROW(ulp_of(1.0, at::kInt), std::invalid_argument);
}

// With floor 0 (an exact comparison's floor) the figure is in units of ulp(e) itself.
TEST(Ulp, UnflooredErrorIsInUnitsOfTheExpectedValuesUlp) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(ulp_error(1.0 + std::ldexp(1.0, -23), 1.0, at::kFloat, 0.0), 1.0);
  EXPECT_EQ(ulp_error(1.0 - std::ldexp(1.0, -24), 1.0, at::kFloat, 0.0), 0.5);  // below 1 the spacing halves
  // Across zero: 2 / ulp(1), not the ~2^31 bit patterns between -1 and 1.
  EXPECT_EQ(ulp_error(-1.0, 1.0, at::kFloat, 0.0), std::ldexp(1.0, 24));
  // Near zero and across it, in units of the expected value's ulp (float64 ~1e-14: the report's
  // "ulp 4.4e+18" was the bit distance).
  EXPECT_EQ(ulp_error(-1e-14, 1e-14, at::kDouble, 0.0), 2e-14 / std::ldexp(1.0, -99));
  EXPECT_LT(ulp_error(-1e-14, 1e-14, at::kDouble, 0.0), 1.3e16);
  // Subnormals: float32's spacing there is 2^-149.
  const double sub = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(ulp_error(sub, 0.0, at::kFloat, 0.0), 1.0);
  EXPECT_EQ(ulp_error(-sub, sub, at::kFloat, 0.0), 2.0);
  EXPECT_EQ(ulp_error(std::ldexp(1.0, -24), 0.0, at::kHalf, 0.0), 1.0);
  EXPECT_EQ(ulp_error(std::ldexp(1.0, -133), 0.0, at::kBFloat16, 0.0), 1.0);
  // Non-finite: equal infinities are no error, anything else against an infinity is inf.
  EXPECT_EQ(ulp_error(inf, inf, at::kDouble, 0.0), 0.0);
  EXPECT_EQ(ulp_error(65504.0, inf, at::kHalf, 0.0), inf);
  EXPECT_EQ(ulp_error(-inf, inf, at::kFloat, 0.0), inf);
  EXPECT_THROW(ulp_error(std::nan(""), 1.0, at::kFloat, 0.0), std::invalid_argument);
  // float64 against an exact zero: the quotient exceeds the double range and saturates.
  EXPECT_EQ(ulp_error(1e-14, 0.0, at::kDouble, 0.0), std::numeric_limits<double>::max());
}

TEST(Compare, MaxUlpNearAndAcrossZeroIsInUlpsOfTheFloor) {
  // Values of order 1e-14 on both sides of zero, within atol: float64's default floor is
  // 1e-7 / 1e-7 = 1, so the metric is 2e-14 / ulp(1) = 2e-14 / 2^-52 ~ 90 (unfloored: 1.3e16; the
  // bit-pattern distance was ~9.2e18).
  const auto e = at::tensor(std::vector<double>{1e-14, 0.5}, at::kDouble);
  const auto a = at::tensor(std::vector<double>{-1e-14, 0.5}, at::kDouble);
  const Comparison c = compare(a, e);
  EXPECT_TRUE(c.pass);
  EXPECT_EQ(c.ulp_floor, 1.0);
  EXPECT_EQ(c.max_ulp, 2e-14 / std::ldexp(1.0, -52));
  // float32 subnormals, compared exactly (rtol = atol = 0: floor 0, the subnormal spacing).
  const float sub = std::numeric_limits<float>::denorm_min();
  const Comparison exact = compare(f32({-sub, 3 * sub}), f32({sub, sub}), {Tolerance{0.0, 0.0}});
  EXPECT_EQ(exact.ulp_floor, 0.0);
  EXPECT_EQ(exact.max_ulp, 2.0);
  // A mismatch against an infinity stays inf.
  EXPECT_TRUE(std::isinf(compare(f32({1.0f}), f32({std::numeric_limits<float>::infinity()})).max_ulp));
}

}  // namespace
}  // namespace crossdev::parity
