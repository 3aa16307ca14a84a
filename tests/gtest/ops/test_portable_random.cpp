// The portable generator: a pure function of (key, counter). The fixed values below were
// computed by an independent Python implementation of the same definition (docs/ops.md), so a
// change of algorithm, or a platform that computes it differently, fails here.
#include <ATen/CPUGeneratorImpl.h>

#include "ops/cpu/capability.h"
#include "ops/generator_stream.h"
#include "ops/portable_random.h"
#include "ops_test_util.h"

namespace crossdev::ops::testing {
namespace {

namespace pr = portable_random;

TEST(PortableRandom, DocumentedFirstValues) {
  const std::uint64_t key = pr::stream_key({"crossdev"}, 0);
  EXPECT_EQ(key, 0x9990859c3ef777f7ULL);
  EXPECT_EQ(pr::uniform01(key, 0), 0.5836333937281687);
  EXPECT_EQ(pr::uniform01(key, 1), 0.6674550732565276);
  EXPECT_EQ(pr::uniform01(key, 2), 0.5157490736387219);
  EXPECT_EQ(pr::uniform01(key, 3), 0.9325755324844693);
}

TEST(PortableRandom, KeysSeparateSeedsNamesAndPartBoundaries) {
  EXPECT_NE(pr::stream_key({"op", "x"}, 1), pr::stream_key({"op", "x"}, 2));
  EXPECT_NE(pr::stream_key({"op", "x"}, 1), pr::stream_key({"op", "y"}, 1));
  EXPECT_NE(pr::stream_key({"ab", "c"}, 1), pr::stream_key({"a", "bc"}, 1));
  EXPECT_EQ(pr::stream_key({"op", "x"}, 1), pr::stream_key({"op", "x"}, 1));
}

TEST(PortableRandom, UniformTensorIsInRangeAndRoughlyUniform) {
  const at::Tensor t = pr::uniform_tensor(pr::stream_key({"range"}, 3), {100000}, -2.0, 6.0);
  EXPECT_GE(t.min().item<double>(), -2.0);
  EXPECT_LT(t.max().item<double>(), 6.0);
  EXPECT_NEAR(t.mean().item<double>(), 2.0, 0.05);
}

TEST(PortableRandom, MakeInputsIsBitIdenticalPerSeedAndDiffersAcrossSeeds) {
  for (const OpSpec* op : all_ops()) {
    const OpCall a = op->make_inputs("basic", at::kFloat, c10::Device(c10::kCPU), 42);
    const OpCall b = op->make_inputs("basic", at::kFloat, c10::Device(c10::kCPU), 42);
    const OpCall c = op->make_inputs("basic", at::kFloat, c10::Device(c10::kCPU), 43);
    for (const auto& [name, t] : a.tensors) {
      EXPECT_TRUE(at::equal(t, b.tensors.at(name))) << op->name() << "." << name;
      if (t.is_floating_point()) {
        EXPECT_FALSE(at::equal(t, c.tensors.at(name))) << op->name() << "." << name;
      }
    }
    EXPECT_EQ(a.scalars, b.scalars);
  }
}

TEST(PortableRandom, InputsAreTheFloat64ValuesCastOnce) {
  const OpSpec* op = find_op("gelu_tanh");
  const at::Tensor f64 = op->make_inputs("odd_tail", at::kDouble, c10::Device(c10::kCPU), 5).tensors.at("x");
  const at::Tensor bf16 = op->make_inputs("odd_tail", at::kBFloat16, c10::Device(c10::kCPU), 5).tensors.at("x");
  EXPECT_TRUE(at::equal(f64.to(at::kBFloat16), bf16));
  const at::Tensor meta = op->make_inputs("odd_tail", at::kBFloat16, c10::Device(c10::kMeta), 5).tensors.at("x");
  EXPECT_EQ(meta.sizes(), bf16.sizes());
  EXPECT_EQ(meta.scalar_type(), at::kBFloat16);
}

TEST(PortableRandom, DropoutMaskIsReproducibleAndKeepsAboutOneMinusP) {
  const at::Tensor a = pr::dropout_keep_mask(9, 0, {200, 500}, 0.25, c10::Device(c10::kCPU));
  const at::Tensor b = pr::dropout_keep_mask(9, 0, {200, 500}, 0.25, c10::Device(c10::kCPU));
  const at::Tensor c = pr::dropout_keep_mask(10, 0, {200, 500}, 0.25, c10::Device(c10::kCPU));
  EXPECT_TRUE(at::equal(a, b));
  EXPECT_FALSE(at::equal(a, c));
  EXPECT_NEAR(a.to(at::kDouble).mean().item<double>(), 0.75, 0.01);
  // Row-major counters: a mask of a prefix shape is a prefix of the flat mask.
  EXPECT_TRUE(at::equal(pr::dropout_keep_mask(9, 0, {1000}, 0.25, c10::Device(c10::kCPU)), a.flatten().narrow(0, 0, 1000)));
  // The offset starts the counters further on: the stream continues, as a Philox offset does.
  EXPECT_TRUE(at::equal(pr::dropout_keep_mask(9, 1000, {500}, 0.25, c10::Device(c10::kCPU)), a.flatten().narrow(0, 1000, 500)));
}

TEST(PortableRandom, FusedDropoutDropsExactlyTheFallbackMaskElements) {
  const OpSpec* op = find_op("bias_dropout_add_scale");
  OpCall call = op->make_inputs("no_bias_no_residual", at::kFloat, c10::Device(c10::kCPU), 17);
  call.tensors["x"] = at::ones({4, 67});
  call.scalars["scale_value"] = 1.0;
  // The stream the call's generator (a CPU generator seeded 17) gives: a non-zero offset.
  const generator_stream::Stream stream = generator_stream::draw(at::detail::createCPUGenerator(17), 4 * 67);
  ASSERT_NE(stream.offset, 0u);
  const at::Tensor keep = pr::dropout_keep_mask(stream.seed, stream.offset, {4, 67}, call.scalars.at("p"), c10::Device(c10::kCPU));
  const at::Tensor fused = op->run(Impl::Fused, call);
  EXPECT_TRUE(at::equal(fused.ne(0), keep));
  EXPECT_TRUE(at::equal(op->run(Impl::Fallback, call).ne(0), keep));
  call.training = false;  // inference variant: no dropout at all
  EXPECT_TRUE(at::equal(op->run(Impl::Fused, call), call.tensors.at("x")));
}

// The integer rule the kernels use (dropout_threshold / dropout_keep) is the documented double
// rule uniform01(key, i) >= p for every p, including p equal to a generated value (kept), the
// next double above it (dropped), the ends, values outside [0, 1] and NaN.
TEST(PortableRandom, IntegerDropoutRuleIsTheDoubleCompare) {
  const std::uint64_t key = pr::dropout_key(21);
  std::vector<double> ps = {0.0, -0.0, 5e-324, 1e-300, 0x1.0p-53, 0.1, 0.25, 0.5, std::nextafter(0.5, 0.0),
                            std::nextafter(1.0, 0.0), 1.0, 1.5, -0.25, std::numeric_limits<double>::quiet_NaN(),
                            std::numeric_limits<double>::infinity()};
  for (std::uint64_t i = 0; i < 64; ++i) {
    const double u = pr::uniform01(key, i);
    ps.push_back(u);
    ps.push_back(std::nextafter(u, 2.0));
    ps.push_back(std::nextafter(u, -1.0));
  }
  for (double p : ps) {
    const std::uint64_t t = pr::dropout_threshold(p);
    for (std::uint64_t i = 0; i < 2000; ++i) {
      ASSERT_EQ(pr::dropout_keep(key, i, t), pr::uniform01(key, i) >= p) << "p=" << p << " i=" << i;
    }
  }
}

// The fused kernels decide 64 elements at a time in SIMD (ops/cpu/lane_bits.h): on every
// capability this build and CPU can run, the forward keeps exactly the fallback mask's elements
// and the backward passes gradient exactly there, for sizes that end mid-block and mid-vector.
TEST(PortableRandom, FusedDropoutMaskIsTheFallbackMaskOnEveryCapability) {
  const OpSpec* op = find_op("bias_dropout_add_scale");
  for (cpu::CpuCapability capability : cpu::available_capabilities()) {
    cpu::ScopedCpuCapability forced(capability);
    for (double p : {0.1, 0.5, 0.9}) {
      for (std::int64_t cols : {1, 63, 64, 1000, 4099}) {
        SCOPED_TRACE(std::string(cpu::capability_name(capability)) + " p=" + std::to_string(p) +
                     " cols=" + std::to_string(cols));
        OpCall call = op->make_inputs("no_bias_no_residual", at::kFloat, c10::Device(c10::kCPU), 5);
        call.tensors["x"] = at::ones({3, cols});
        call.scalars["p"] = p;
        call.scalars["scale_value"] = 1.0;
        const generator_stream::Stream stream = generator_stream::draw(at::detail::createCPUGenerator(5), 3 * cols);
        const at::Tensor keep = pr::dropout_keep_mask(stream.seed, stream.offset, {3, cols}, p, c10::Device(c10::kCPU));
        auto [fused, leaves] = forward_with_leaves(*op, Impl::Fused, call);
        EXPECT_TRUE(at::equal(fused.ne(0), keep));
        fused.backward(at::ones_like(fused));
        EXPECT_TRUE(at::equal(leaves.at("x").grad().ne(0), keep));
      }
    }
  }
}

}  // namespace
}  // namespace crossdev::ops::testing
