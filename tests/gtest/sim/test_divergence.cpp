// The divergence switch (divergence_switch.h, diverging_ops.h): its grammar, and the sim generator's own
// random stream with the switch on (same seed, other numbers than the CPU; reproducible, seedable).
// The ops' differences are tested from Python (tests/python/sim/test_sim_diverge.py).
#include "sim_test_support.h"

#include <stdexcept>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include "sim/divergence_switch.h"
#include "sim/diverging_ops.h"

namespace crossdev::sim::testing {
namespace {

class DivergenceTest : public SimTest {
 protected:
  void use_diverging(ProfileId id, bool diverge) {
    SimConfig c = default_config(id);
    c.diverge = diverge;
    use(c);
  }
  at::Tensor draw_after_seed(uint64_t seed) {
    at::Generator gen = at::globalContext().defaultGenerator(sim_device(0));
    {
      std::lock_guard<std::mutex> lock(gen.mutex());
      gen.set_current_seed(seed);
    }
    return at::randn({64}, on_sim()).to(at::kCPU);
  }
};

TEST(DivergeSpec, ParsesOffAllAndKindLists) {
  EXPECT_TRUE(parse_diverge_spec("").empty());
  EXPECT_TRUE(parse_diverge_spec("0").empty());
  EXPECT_EQ(parse_diverge_spec("all").size(), 4u);
  EXPECT_EQ(parse_diverge_spec("1").size(), 4u);
  EXPECT_EQ(parse_diverge_spec(" cuda , mps,cuda"), (std::vector<DeviceKind>{DeviceKind::CUDA, DeviceKind::MPS}));
  EXPECT_EQ(parse_diverge_spec("tpu"), (std::vector<DeviceKind>{DeviceKind::XLA}));
}

TEST(DivergeSpec, RejectsWhatIsNotASimulatedKindNamingTheGrammar) {
  for (const char* bad : {"yes", "cpu", "cuda,", "2"}) {
    try {
      parse_diverge_spec(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("CROSSDEV_SIM_DIVERGE='"), std::string::npos) << what;
      EXPECT_NE(what.find("expected 0, 1, all, or a comma-separated list of"), std::string::npos) << what;
    }
  }
}

TEST(DivergeSpec, EveryProfileHasTraitsAndOnlyCudaReadsTf32Flags) {
  for (ProfileId id : kAllProfiles) {
    EXPECT_EQ(divergence_traits(id).profile, id);
    EXPECT_NE(divergence_traits(id).stream_mix & 0xFFFFFFFFull, 0u) << "mt19937 is seeded from the low 32 bits";
    EXPECT_EQ(divergence_traits(id).tf32 == Tf32Flags::CudaFlags, id == ProfileId::CudaLike);
  }
}

TEST_F(DivergenceTest, OwnRandomStreamDiffersFromTheCpusAndReproduces) {
  use_diverging(ProfileId::CudaLike, true);
  const at::Tensor first = draw_after_seed(1234);
  const at::Tensor second = draw_after_seed(1234);
  EXPECT_TRUE(at::equal(first, second));
  const at::Tensor cpu = at::randn({64}, at::make_generator<at::CPUGeneratorImpl>(1234), at::TensorOptions());
  EXPECT_FALSE(at::equal(first, cpu));
  EXPECT_EQ(at::globalContext().defaultGenerator(sim_device(0)).current_seed(), 1234u);
  EXPECT_FALSE(at::equal(draw_after_seed(1235), first));

  use_diverging(ProfileId::MpsLike, true);  // another kind, another stream
  EXPECT_FALSE(at::equal(draw_after_seed(1234), first));

  use_diverging(ProfileId::CudaLike, false);  // off: the CPU's stream again
  EXPECT_TRUE(at::equal(draw_after_seed(1234), cpu));
}

TEST_F(DivergenceTest, EveryTableEntryIsAnOverloadThatReachesSimsDelegation) {
  for (const DivergingOp& entry : diverging_ops()) {
    const auto handle =
        c10::Dispatcher::singleton().findOp(c10::OperatorName(std::string(entry.op), std::string(entry.overload)));
    ASSERT_TRUE(handle.has_value()) << entry.op << "." << entry.overload << " does not exist";
    EXPECT_FALSE(handle->hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutograd))
        << entry.op << "." << entry.overload << " runs a composite kernel on sim, never the delegation";
    EXPECT_FALSE(handle->hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutogradNonFunctional))
        << entry.op << "." << entry.overload << " is a structured wrapper; list its out= overload";
    EXPECT_FALSE(handle->hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd))
        << entry.op << "." << entry.overload << " decomposes before sim";
  }
}

}  // namespace
}  // namespace crossdev::sim::testing
