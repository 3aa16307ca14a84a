// CPU delegation: ops without a native sim kernel, delegated to the CPU kernel, give bit-identical CPU results (no
// numerics emulation), every run is recorded with its reason, and mps-like's unsupported-op list
// raises MPS's NotImplementedError unless the MPS CPU switch is on.
//
// Structured ops reach a PrivateUse1 backend as their out= overload (the functional variant is a
// CompositeExplicitAutogradNonFunctional wrapper), so the delegation sees "aten::add.out" for
// at::add: the same names real MPS errors carry ("aten::upsample_bicubic2d.out").
#include "sim_test_support.h"

namespace crossdev::sim::testing {
namespace {

class SimCpuDelegationTest : public SimTest {
 protected:
  void SetUp() override {
    SimTest::SetUp();
    reset_delegation_records();
  }
};

TEST_F(SimCpuDelegationTest, DelegatedOpsMatchCpuBitForBit) {
  const at::Tensor a = at::randn({8, 16});
  const at::Tensor b = at::randn({16, 5});
  const at::Tensor sa = a.to(sim_device(0));
  const at::Tensor sb = b.to(sim_device(0));
  EXPECT_TRUE(at::equal(at::add(sa, sa, 0.5).to(at::kCPU), at::add(a, a, 0.5)));
  EXPECT_TRUE(at::equal(at::matmul(sa, sb).to(at::kCPU), at::matmul(a, b)));
  EXPECT_TRUE(at::equal(at::softmax(sa, 1).to(at::kCPU), at::softmax(a, 1)));
  EXPECT_TRUE(at::equal(at::exp(sa).sum(1).to(at::kCPU), at::exp(a).sum(1)));
  // native_layer_norm has no PrivateUse1 kernel: it runs PyTorch's composite decomposition, as on
  // any backend without one, so it is close to but not bit-identical with the CPU kernel.
  EXPECT_TRUE(at::allclose(at::layer_norm(sa, {16}).to(at::kCPU), at::layer_norm(a, {16}), 1e-5, 1e-6));
  const at::Tensor result = at::matmul(sa, sb);
  EXPECT_TRUE(result.is_privateuseone()) << "delegated results come back to the sim device";
}

TEST_F(SimCpuDelegationTest, InPlaceAndOutVariantsWriteToSimMemory) {
  const at::Tensor a = at::randn({6});
  at::Tensor s = a.to(sim_device(0));
  s.mul_(2.0);
  EXPECT_TRUE(at::equal(s.to(at::kCPU), a * 2.0));
  at::Tensor out = at::empty({6}, on_sim());
  at::add_out(out, s, s);
  EXPECT_TRUE(at::equal(out.to(at::kCPU), a * 4.0));
}

TEST_F(SimCpuDelegationTest, EveryDelegationIsRecordedWithItsReason) {
  const at::Tensor s = at::randn({4, 4}).to(sim_device(0));
  at::add(s, s);
  at::add(s, s);
  at::softmax(s, 0);
  const auto records = delegation_records();
  ASSERT_EQ(records.count("aten::add.out"), 1u);
  EXPECT_EQ(records.at("aten::add.out").count, 2);
  EXPECT_EQ(records.at("aten::add.out").reason, DelegationReason::NoNativeSimKernel);
  EXPECT_EQ(records.count("aten::_softmax.out"), 1u);
  EXPECT_EQ(records.count("aten::empty.memory_format"), 0u) << "native kernels are not delegated";
  EXPECT_STRNE(delegation_reason_text(DelegationReason::NoNativeSimKernel), "");
}

TEST_F(SimCpuDelegationTest, MpsUnsupportedOpRaisesMpsNotImplementedText) {
  SimConfig config = default_config(ProfileId::MpsLike);
  config.unsupported_ops = {"aten::cumsum"};
  config.unsupported_ops_on_cpu = false;
  use(config);
  const at::Tensor s = at::arange(4, at::kFloat).to(sim_device(0));
  try {
    at::cumsum(s, 0);
    ADD_FAILURE() << "cumsum ran although mps-like lists it as unsupported";
  } catch (const c10::NotImplementedError& e) {
    EXPECT_EQ(std::string(e.what_without_backtrace()),
              "The operator 'aten::cumsum.out' is not currently implemented for the MPS device. If you want this op "
              "to be added in priority during the prototype phase of this feature, please comment on "
              "https://github.com/pytorch/pytorch/issues/77764. As a temporary fix, you can set the environment "
              "variable `PYTORCH_ENABLE_MPS_FALLBACK=1` to use the CPU as a fallback for this op. WARNING: this "
              "will be slower than running natively on MPS.");
  }
  EXPECT_NO_THROW(at::add(s, s)) << "only listed ops are unsupported";
}

TEST_F(SimCpuDelegationTest, OverloadSpecificEntryOnlyBlocksThatOverload) {
  SimConfig config = default_config(ProfileId::MpsLike);
  config.unsupported_ops = {"aten::cumsum.dimname"};
  use(config);
  const at::Tensor s = at::ones({3}, on_sim());
  EXPECT_NO_THROW(at::cumsum(s, 0)) << "aten::cumsum.out is not the listed overload";
  config.unsupported_ops = {"aten::cumsum.out"};
  use(config);
  EXPECT_THROW(at::cumsum(s, 0), c10::NotImplementedError);
  EXPECT_NO_THROW(at::add(s, s));
}

TEST_F(SimCpuDelegationTest, MpsCpuSwitchRunsTheUnsupportedOpOnCpuAndRecordsWhy) {
  SimConfig config = default_config(ProfileId::MpsLike);
  config.unsupported_ops = {"aten::cumsum"};
  config.unsupported_ops_on_cpu = true;
  use(config);
  const at::Tensor cpu = at::arange(4, at::kFloat);
  const at::Tensor result = at::cumsum(cpu.to(sim_device(0)), 0);
  EXPECT_TRUE(at::equal(result.to(at::kCPU), at::cumsum(cpu, 0)));
  const auto records = delegation_records();
  ASSERT_EQ(records.count("aten::cumsum.out"), 1u);
  EXPECT_EQ(records.at("aten::cumsum.out").reason, DelegationReason::ProfileUnsupported);
}

}  // namespace
}  // namespace crossdev::sim::testing
