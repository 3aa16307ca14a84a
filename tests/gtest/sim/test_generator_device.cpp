// Generators (seeded sim generators reproduce, and match a CPU generator with the same seed) and
// the kind -> sim device mapping the harness uses (simulated only, real devices take precedence).
#include "sim_test_support.h"

#include <stdexcept>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>

#include "sim/sim_guard.h"
#include "sim/simulated_device.h"

namespace crossdev::sim::testing {
namespace {

class SimGeneratorTest : public SimTest {};

TEST_F(SimGeneratorTest, SeededDefaultGeneratorReproducesAndMatchesCpu) {
  at::Generator gen = at::globalContext().defaultGenerator(sim_device(0));
  EXPECT_TRUE(gen.device().is_privateuseone());
  auto draw = [&] {
    gen.set_current_seed(1234);
    return at::randn({16}, on_sim()).to(at::kCPU);
  };
  const at::Tensor first = draw();
  const at::Tensor second = draw();
  EXPECT_TRUE(at::equal(first, second));
  const at::Tensor cpu = at::randn({16}, at::make_generator<at::CPUGeneratorImpl>(1234), at::TensorOptions());
  EXPECT_TRUE(at::equal(first, cpu));
}

TEST_F(SimGeneratorTest, ExplicitGeneratorsAreIndependent) {
  at::Generator g1 = at::detail::getPrivateUse1Hooks().getNewGenerator(0);
  at::Generator g2 = at::detail::getPrivateUse1Hooks().getNewGenerator(0);
  g1.set_current_seed(1);
  g2.set_current_seed(2);
  const at::Tensor a = at::rand({32}, g1, on_sim()).to(at::kCPU);
  const at::Tensor b = at::rand({32}, g2, on_sim()).to(at::kCPU);
  EXPECT_FALSE(at::equal(a, b));
  g1.set_current_seed(1);
  EXPECT_TRUE(at::equal(at::rand({32}, g1, on_sim()).to(at::kCPU), a));
  EXPECT_EQ(g1.current_seed(), 1u);
}

class SimulatedDeviceTest : public SimTest {};

TEST_F(SimulatedDeviceTest, SimulatedKindMapsToSimWithMatchingProfile) {
  const HostProfile host = HostProfile::hypothetical("cuda:2,mps");
  const auto cuda1 = device_for_simulated_kind(DeviceKind::CUDA, 1, host);
  ASSERT_TRUE(cuda1.has_value());
  EXPECT_EQ(cuda1->device, sim_device(1));
  EXPECT_EQ(cuda1->profile, ProfileId::CudaLike);
  EXPECT_EQ(cuda1->provenance, Provenance::Simulated);
  EXPECT_EQ(current_profile().id, ProfileId::CudaLike);
  EXPECT_EQ(device_count(), 2);
  EXPECT_EQ(cuda1->label(), "sim:1 (simulated cuda:1, cuda-like)");

  const auto mps = device_for_simulated_kind(DeviceKind::MPS, 0, host);
  ASSERT_TRUE(mps.has_value());
  EXPECT_EQ(current_profile().id, ProfileId::MpsLike);
  EXPECT_THROW(at::empty({1}, at::TensorOptions().device(mps->device).dtype(at::kDouble)), c10::TypeError);
}

TEST_F(SimulatedDeviceTest, RealOrAbsentKindsAreNotSimulated) {
  HostProfile host;
  host.set(DeviceKind::CUDA, 1, Provenance::Real);
  EXPECT_FALSE(device_for_simulated_kind(DeviceKind::CUDA, 0, host).has_value()) << "a real device wins";
  EXPECT_FALSE(device_for_simulated_kind(DeviceKind::XPU, 0, host).has_value()) << "absent: nothing to simulate";
}

TEST_F(SimulatedDeviceTest, BadRequestsAreRejectedWithAReason) {
  EXPECT_THROW(sim_device_for(DeviceKind::CPU, 0), std::invalid_argument);
  EXPECT_THROW(sim_device_for(DeviceKind::CUDA, 2, 2), std::invalid_argument);
  EXPECT_THROW(sim_device_for(DeviceKind::MPS, 0, 2), c10::Error) << "mps-like has a single device";
}

}  // namespace
}  // namespace crossdev::sim::testing
