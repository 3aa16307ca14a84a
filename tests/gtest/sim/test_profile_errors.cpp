// Each emulation profile's constraints with its verbatim error text and exception type:
// device mixing, MPS dtypes, XLA under inference_mode, CUDA/XPU device indices and counts.
#include "sim_test_support.h"

#include <ATen/core/grad_mode.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/InferenceMode.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "sim/sim_guard.h"

namespace crossdev::sim::testing {
namespace {

class SimProfileErrorTest : public SimTest {};

TEST_F(SimProfileErrorTest, MixingSimAndCpuRaisesTheSameDeviceText) {
  const at::Tensor s = at::ones({2, 2}, on_sim());
  const at::Tensor c = at::ones({2, 2});
  EXPECT_EQ(error_text([&] { at::add(s, c); }),
            "Expected all tensors to be on the same device, but found at least two devices, sim:0 and cpu!");
  EXPECT_EQ(error_text([&] { at::mm(c, s); }),
            "Expected all tensors to be on the same device, but found at least two devices, cpu and sim:0!");
}

TEST_F(SimProfileErrorTest, CpuScalarTensorsMixFreely) {
  const at::Tensor s = at::ones({3}, on_sim());
  const at::Tensor result = at::mul(s, at::scalar_tensor(2.5));
  EXPECT_TRUE(result.is_privateuseone());
  EXPECT_TRUE(at::equal(result.to(at::kCPU), at::full({3}, 2.5)));
}

TEST_F(SimProfileErrorTest, TwoSimDevicesDoNotMix) {
  use(ProfileId::CudaLike, 2);
  const at::Tensor a = at::ones({2}, on_sim(0));
  const at::Tensor b = at::ones({2}, on_sim(1));
  EXPECT_EQ(error_text([&] { at::add(a, b); }),
            "Expected all tensors to be on the same device, but found at least two devices, sim:0 and sim:1!");
}

TEST_F(SimProfileErrorTest, MpsLikeMixingRaisesPlaceholderStorage) {
  use(ProfileId::MpsLike);
  const at::Tensor s = at::ones({2, 2}, on_sim());
  const at::Tensor c = at::ones({2, 2});
  EXPECT_EQ(error_text([&] { at::mm(s, c); }), "Placeholder storage has not been allocated on MPS device!");
}

TEST_F(SimProfileErrorTest, MpsLikeRejectsFloat64WithMpsTypeError) {
  use(ProfileId::MpsLike);
  const std::string expected =
      "Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64. Please use "
      "float32 instead.";
  try {
    at::empty({2}, on_sim().dtype(at::kDouble));
    ADD_FAILURE() << "float64 allocation succeeded on mps-like";
  } catch (const c10::TypeError& e) {
    EXPECT_EQ(std::string(e.what_without_backtrace()), expected);
  }
  EXPECT_EQ(error_text([] { at::ones({2}, at::kDouble).to(sim_device(0)); }), expected);
  EXPECT_EQ(error_text([] { at::ones({2}, at::kFloat).to(sim_device(0)).to(at::kDouble); }), expected);
  EXPECT_EQ(error_text([] { at::empty({2}, at::TensorOptions().device(sim_device(0)).dtype(at::kComplexDouble)); }),
            "Trying to convert ComplexDouble to the MPS backend but it does not have support for that dtype.");
  EXPECT_NO_THROW(at::empty({2}, on_sim().dtype(at::kFloat)));
  EXPECT_NO_THROW(at::empty({2}, on_sim().dtype(at::kComplexFloat)));
}

TEST_F(SimProfileErrorTest, PlainProfileAcceptsFloat64) {
  EXPECT_NO_THROW(at::empty({2}, on_sim().dtype(at::kDouble)));
}

TEST_F(SimProfileErrorTest, TpuLikeInferenceModeRaisesVersionCounterError) {
  use(ProfileId::TpuLike);
  const at::Tensor existing = at::ones({2}, on_sim());
  {
    c10::InferenceMode guard;
    EXPECT_EQ(error_text([] { at::ones({2}, at::TensorOptions().device(sim_device(0))); }),
              "Cannot set version_counter for inference tensor");
    EXPECT_EQ(error_text([&] { at::add(existing, existing); }), "Cannot set version_counter for inference tensor");
  }
  at::NoGradGuard no_grad;  // seed 001's recipe: torch.no_grad works on XLA
  EXPECT_TRUE(at::equal(at::add(existing, existing).to(at::kCPU), at::full({2}, 2.0f)));
  EXPECT_EQ(profile(ProfileId::TpuLike).preferred_dtype, at::kBFloat16);
}

TEST_F(SimProfileErrorTest, InferenceModeIsFineOutsideTpuLike) {
  use(ProfileId::CudaLike);
  c10::InferenceMode guard;
  EXPECT_NO_THROW(at::add(at::ones({2}, on_sim()), 1));
}

TEST_F(SimProfileErrorTest, CudaLikeHasNDevicesAndGuardSwitchesBetweenThem) {
  use(ProfileId::CudaLike, 3);
  const auto* guard_impl = c10::impl::getDeviceGuardImpl(c10::DeviceType::PrivateUse1);
  EXPECT_EQ(guard_impl->deviceCount(), 3);
  EXPECT_EQ(current_device(), 0);
  {
    c10::DeviceGuard guard(sim_device(2));
    EXPECT_EQ(current_device(), 2);
    const at::Tensor t = at::empty({1}, at::TensorOptions().device(c10::DeviceType::PrivateUse1));
    EXPECT_EQ(t.device().index(), 2) << "an index-less sim device means the current one";
  }
  EXPECT_EQ(current_device(), 0);
  const at::Tensor on1 = at::ones({2}, on_sim(1));
  EXPECT_EQ(on1.device(), sim_device(1));
  EXPECT_EQ(at::add(on1, on1).device(), sim_device(1));
  EXPECT_EQ(error_text([] { at::empty({1}, at::TensorOptions().device(sim_device(3))); }),
            "CUDA error: invalid device ordinal");
}

TEST_F(SimProfileErrorTest, XpuLikeOutOfRangeIndexRaisesXpuText) {
  use(ProfileId::XpuLike, 2);
  EXPECT_EQ(error_text([] { at::empty({1}, at::TensorOptions().device(sim_device(5))); }),
            "The device index is out of range. It must be in [0, 2), but got 5.");
}

TEST_F(SimProfileErrorTest, ProfileSwitchRefusesToDropDevicesThatHoldTensors) {
  use(ProfileId::CudaLike, 2);
  at::Tensor on1 = at::ones({4}, on_sim(1));
  EXPECT_THROW(set_profile(ProfileId::MpsLike), c10::Error);
  EXPECT_THROW(set_profile(ProfileId::CudaLike, 99), c10::Error);
  on1.reset();
  empty_cache();
  EXPECT_NO_THROW(set_profile(ProfileId::MpsLike));
  EXPECT_EQ(device_count(), 1);
}

TEST_F(SimProfileErrorTest, ProfileTableMapsEveryAcceleratorKind) {
  EXPECT_EQ(profile_for_kind(DeviceKind::MPS), ProfileId::MpsLike);
  EXPECT_EQ(profile_for_kind(DeviceKind::XLA), ProfileId::TpuLike);
  EXPECT_EQ(profile_for_kind(DeviceKind::CUDA), ProfileId::CudaLike);
  EXPECT_EQ(profile_for_kind(DeviceKind::XPU), ProfileId::XpuLike);
  EXPECT_FALSE(profile_for_kind(DeviceKind::CPU).has_value());
  for (ProfileId id : kAllProfiles) EXPECT_EQ(profile_from_name(profile_name(id)), id);
  EXPECT_FALSE(profile_from_name("tpu").has_value());
}

}  // namespace
}  // namespace crossdev::sim::testing
