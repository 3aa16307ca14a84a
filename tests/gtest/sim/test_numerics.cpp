// Numerics emulation: TF32 rounding of matmul operands gives a nonzero number of ULPs of
// divergence from CPU, bounded by TF32's operand error; flush-to-zero removes subnormal outputs.
#include "sim_test_support.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "sim/numerics.h"

namespace crossdev::sim::testing {
namespace {

float from_bits(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

TEST(SimTf32Rounding, RoundsToNearestEvenOnTenMantissaBits) {
  const float ulp10 = std::ldexp(1.0f, -10);  // TF32's unit in the last place at 1.0
  EXPECT_EQ(round_to_tf32(1.0f), 1.0f);
  EXPECT_EQ(round_to_tf32(1.0f + std::ldexp(1.0f, -11)), 1.0f) << "tie goes to the even mantissa";
  EXPECT_EQ(round_to_tf32(1.0f + 3 * std::ldexp(1.0f, -11)), 1.0f + 2 * ulp10) << "tie goes to the even mantissa";
  EXPECT_EQ(round_to_tf32(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 1.0f + ulp10);
  EXPECT_EQ(round_to_tf32(-(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20))), -(1.0f + ulp10));
  EXPECT_EQ(round_to_tf32(from_bits(0x3F801FFFu)), from_bits(0x3F802000u));
  EXPECT_TRUE(std::isinf(round_to_tf32(std::numeric_limits<float>::infinity())));
  EXPECT_TRUE(std::isnan(round_to_tf32(std::numeric_limits<float>::quiet_NaN())));
}

TEST(SimUlpDistance, CountsRepresentableStepsAcrossZero) {
  EXPECT_EQ(ulp_distance(1.0f, 1.0f), 0);
  EXPECT_EQ(ulp_distance(1.0f, std::nextafter(1.0f, 2.0f)), 1);
  EXPECT_EQ(ulp_distance(0.0f, -0.0f), 0);
  EXPECT_EQ(ulp_distance(from_bits(1), from_bits(0x80000001u)), 2);
}

class SimNumericsTest : public SimTest {
 protected:
  void use_numerics(bool tf32, bool ftz) {
    SimConfig config = default_config(ProfileId::CudaLike);
    config.numerics.tf32_matmul = tf32;
    config.numerics.flush_subnormals = ftz;
    use(config);
  }
};

TEST_F(SimNumericsTest, Tf32MatmulDivergesFromCpuWithinTheTf32Bound) {
  use_numerics(/*tf32=*/true, /*ftz=*/false);
  at::manual_seed(7);
  constexpr int64_t K = 128;
  const at::Tensor a = at::randn({64, K});
  const at::Tensor b = at::randn({K, 32});
  const at::Tensor cpu = at::matmul(a, b);
  const at::Tensor sim = at::matmul(a.to(sim_device(0)), b.to(sim_device(0))).to(at::kCPU);

  std::int64_t max_ulps = 0, differing = 0;
  const float* x = cpu.data_ptr<float>();
  const float* y = sim.data_ptr<float>();
  for (int64_t i = 0; i < cpu.numel(); ++i) {
    const std::int64_t d = ulp_distance(x[i], y[i]);
    max_ulps = std::max(max_ulps, d);
    differing += d > 0;
  }
  EXPECT_GT(max_ulps, 0) << "TF32 emulation must diverge from CPU";
  EXPECT_GT(differing, cpu.numel() / 2);
  // Each TF32 operand carries relative error <= 2^-11, so |product error| <= 2^-10 |a||b|; the
  // float32 accumulation of both sides adds at most K * 2^-23 |a||b|.
  const at::Tensor bound = at::matmul(a.abs(), b.abs()) * (std::ldexp(1.0, -10) + K * std::ldexp(1.0, -23));
  EXPECT_TRUE((cpu - sim).abs().le(bound).all().item<bool>());
  // The divergence is what real TF32 shows: beyond float32's default assert_close tolerance.
  EXPECT_FALSE(at::allclose(sim, cpu, /*rtol=*/1.3e-6, /*atol=*/1e-5));
}

TEST_F(SimNumericsTest, LinearIsCoveredThroughAddmm) {
  use_numerics(true, false);
  at::manual_seed(3);
  const at::Tensor x = at::randn({16, 64});
  const at::Tensor w = at::randn({8, 64});
  const at::Tensor bias = at::randn({8});
  const at::Tensor cpu = at::linear(x, w, bias);
  const at::Tensor sim = at::linear(x.to(sim_device(0)), w.to(sim_device(0)), bias.to(sim_device(0))).to(at::kCPU);
  EXPECT_FALSE(at::equal(cpu, sim));
  EXPECT_TRUE(at::allclose(sim, cpu, /*rtol=*/1e-2, /*atol=*/1e-2));
}

TEST_F(SimNumericsTest, ElementwiseOpsAreNotRounded) {
  use_numerics(true, false);
  const at::Tensor a = at::randn({100});
  EXPECT_TRUE(at::equal(at::mul(a.to(sim_device(0)), 3.0).to(at::kCPU), a * 3.0));
}

TEST_F(SimNumericsTest, WithoutEmulationMatmulIsBitIdentical) {
  use_numerics(false, false);
  const at::Tensor a = at::randn({32, 48});
  const at::Tensor b = at::randn({48, 16});
  EXPECT_TRUE(at::equal(at::matmul(a.to(sim_device(0)), b.to(sim_device(0))).to(at::kCPU), at::matmul(a, b)));
}

TEST_F(SimNumericsTest, FlushToZeroZeroesSubnormalOutputsKeepingSign) {
  const float sub = std::numeric_limits<float>::denorm_min() * 1000;
  const float normal_min = std::numeric_limits<float>::min();
  const at::Tensor cpu = at::tensor({sub, -sub, 1.0f, normal_min});

  use_numerics(false, /*ftz=*/true);
  const at::Tensor on = cpu.to(sim_device(0));
  EXPECT_TRUE(at::equal(on.to(at::kCPU), cpu)) << "copies do not flush";
  const at::Tensor flushed = at::mul(on, 1.0).to(at::kCPU);
  const float* f = flushed.data_ptr<float>();
  EXPECT_EQ(f[0], 0.0f);
  EXPECT_FALSE(std::signbit(f[0]));
  EXPECT_EQ(f[1], 0.0f);
  EXPECT_TRUE(std::signbit(f[1]));
  EXPECT_EQ(f[2], 1.0f);
  EXPECT_EQ(f[3], normal_min);

  use_numerics(false, /*ftz=*/false);
  EXPECT_TRUE(at::equal(at::mul(cpu.to(sim_device(0)), 1.0).to(at::kCPU), cpu));
}

}  // namespace
}  // namespace crossdev::sim::testing
