// The dropout checks on synthetic outputs whose mask is known, so each verdict is derivable
// by hand: a correct output passes; a wrong kept value, a wrong dropped value and a biased
// keep rate each fail for their own reason.
#include <cmath>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "parity/dropout_check.h"

namespace crossdev::parity {
namespace {

struct Synthetic {
  at::Tensor x, residual, kept_value, keep;
  at::Tensor output(double scale) const { return at::where(keep, kept_value * scale, residual); }
};

// Deterministic inputs and a mask keeping exactly `keep_count` of n elements.
Synthetic make(std::int64_t n, std::int64_t keep_count, double p) {
  Synthetic s;
  s.x = at::linspace(-1.0, 1.0, n, at::kDouble) + 0.125;  // x + bias never 0: no ambiguous elements
  s.residual = at::linspace(2.0, 3.0, n, at::kDouble);
  s.kept_value = s.x / (1.0 - p) + s.residual;
  // Spread the kept elements evenly: element i is kept when floor((i+1) k / n) > floor(i k / n).
  const at::Tensor i = at::arange(n, at::kLong);
  s.keep = at::floor_divide((i + 1) * keep_count, n).gt(at::floor_divide(i * keep_count, n));
  return s;
}

TEST(BinomialBound, FiveSigmaAroundTheMean) {
  // n = 10000, keep 0.9: mean 9000, sigma = sqrt(10000 * 0.9 * 0.1) = 30, bound 150 (the exact
  // boundary is left alone: 0.9 and 0.1 are not exact in binary).
  EXPECT_TRUE(within_binomial_bound(9149, 10000, 0.9, 5.0));
  EXPECT_FALSE(within_binomial_bound(9151, 10000, 0.9, 5.0));
  EXPECT_TRUE(within_binomial_bound(8851, 10000, 0.9, 5.0));
  EXPECT_FALSE(within_binomial_bound(8849, 10000, 0.9, 5.0));
  EXPECT_TRUE(within_binomial_bound(9299, 10000, 0.9, 10.0));  // the bound scales with max_sigmas
  EXPECT_TRUE(within_binomial_bound(0, 0, 0.9, 5.0));
}

TEST(DropoutCheck, ExactOutputPasses) {
  const double p = 0.1;
  const Synthetic s = make(10000, 9000, p);
  const DropoutCheck c = check_dropout(s.output(1.0), s.kept_value, s.residual, p, {1e-7, 1e-7});
  EXPECT_TRUE(c.pass) << c.summary();
  EXPECT_EQ(c.kept, 9000);
  EXPECT_EQ(c.dropped, 1000);
  EXPECT_EQ(c.unexplained, 0);
  EXPECT_DOUBLE_EQ(c.keep_rate, 0.9);
}

TEST(DropoutCheck, KeptElementsNotRescaledAreUnexplained) {
  const double p = 0.1;
  const Synthetic s = make(1000, 900, p);
  const at::Tensor not_rescaled = at::where(s.keep, s.x + s.residual, s.residual);
  const DropoutCheck c = check_dropout(not_rescaled, s.kept_value, s.residual, p, {1e-7, 1e-7});
  EXPECT_FALSE(c.pass);
  EXPECT_GT(c.unexplained, 0);
  const std::int64_t first_kept = s.keep.nonzero()[0][0].item<std::int64_t>();
  EXPECT_EQ(c.first_unexplained_index, (std::vector<std::int64_t>{first_kept}));
  EXPECT_NE(c.reason.find("neither"), std::string::npos) << c.reason;
}

TEST(DropoutCheck, DroppedElementsMustEqualResidual) {
  const double p = 0.5;
  const Synthetic s = make(1000, 500, p);
  const at::Tensor zeroed = at::where(s.keep, s.kept_value, at::zeros_like(s.residual));
  const DropoutCheck c = check_dropout(zeroed, s.kept_value, s.residual, p, {1e-7, 1e-7});
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.unexplained, 500);
}

TEST(DropoutCheck, BiasedKeepRateFailsTheBinomialBound) {
  // p = 0.1 but 8500 of 10000 kept: 500 below the mean, 16.7 sigma.
  const double p = 0.1;
  const Synthetic s = make(10000, 8500, p);
  const DropoutCheck c = check_dropout(s.output(1.0), s.kept_value, s.residual, p, {1e-7, 1e-7});
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.unexplained, 0);
  EXPECT_NEAR(c.deviation_sigmas, 500.0 / 30.0, 1e-9);
  EXPECT_NE(c.reason.find("sigma"), std::string::npos) << c.reason;
}

TEST(DropoutCheck, ComparesInTheOutputDtype) {
  // A float16 output is judged against the float64 values rounded to float16, with float16's
  // tolerance: exact values pass, a 1% error on kept elements does not.
  const double p = 0.25;
  const Synthetic s = make(4096, 3072, p);
  const Tolerance half{1e-3, 1e-5};
  EXPECT_TRUE(check_dropout(s.output(1.0).to(at::kHalf), s.kept_value, s.residual, p, half).pass);
  const at::Tensor off = at::where(s.keep, s.kept_value * 1.01, s.residual).to(at::kHalf);
  EXPECT_FALSE(check_dropout(off, s.kept_value, s.residual, p, half).pass);
}

TEST(DropoutCheck, AmbiguousElementsCountAsNeither) {
  // Where kept and dropped values coincide the element says nothing about the mask.
  const double p = 0.5;
  const at::Tensor residual = at::ones({100}, at::kDouble);
  const DropoutCheck c = check_dropout(residual, residual, residual, p, {1e-7, 1e-7});
  EXPECT_TRUE(c.pass) << c.summary();
  EXPECT_EQ(c.ambiguous, 100);
  EXPECT_EQ(c.kept + c.dropped, 0);
}

TEST(DropoutCheck, RejectsDegenerateProbabilities) {
  const at::Tensor t = at::ones({4}, at::kDouble);
  EXPECT_THROW(check_dropout(t, t, t, 0.0, {}), std::invalid_argument);
  EXPECT_THROW(check_dropout(t, t, t, 1.0, {}), std::invalid_argument);
  EXPECT_THROW(check_dropout(t, t, at::ones({5}, at::kDouble), 0.5, {}), std::invalid_argument);
}

}  // namespace
}  // namespace crossdev::parity
