// Runtime CPU dispatch (impl/ops/cpu/capability.h, dispatch.h): every capability this build and
// CPU can run, forced in turn with ScopedCpuCapability, gives fused forward outputs and fused
// backward gradients within assert_close's default tolerance of the fallback, for every op x
// shape set (but `large`) x dtype. The backward is driven with an expanded (stride-0) grad_out,
// what `out.sum().backward()` passes, so the row kernels' strided reads are exercised too.
// conformance/python/test_cpu_capability.py does the same through CROSSDEV_CPU_CAPABILITY.
#include "ops/cpu/capability.h"
#include "ops_test_util.h"

namespace crossdev::ops::testing {
namespace {

using cpu::CpuCapability;

TEST(CpuCapability, NamesRoundTripCaseInsensitively) {
  for (int c = 0; c < cpu::kCpuCapabilities; ++c) {
    const auto capability = static_cast<CpuCapability>(c);
    EXPECT_EQ(cpu::parse_capability(cpu::capability_name(capability)), capability);
  }
  EXPECT_EQ(cpu::parse_capability("AVX512"), CpuCapability::AVX512);
  EXPECT_EQ(cpu::parse_capability("Default"), CpuCapability::Default);
  EXPECT_EQ(cpu::parse_capability("avx"), std::nullopt);
  EXPECT_EQ(cpu::parse_capability(""), std::nullopt);
}

TEST(CpuCapability, AvailableStartsAtDefaultAndContainsTheChoice) {
  const std::vector<CpuCapability> available = cpu::available_capabilities();
  ASSERT_FALSE(available.empty());
  EXPECT_EQ(available.front(), CpuCapability::Default);
  EXPECT_NE(std::find(available.begin(), available.end(), cpu::cpu_capability()), available.end());
  const cpu::CpuCapabilityInfo info = cpu::cpu_capability_info();
  EXPECT_LE(info.chosen, info.hardware);
  EXPECT_LE(info.chosen, info.built);
  EXPECT_FALSE(info.source.empty());
}

TEST(CpuCapability, ScopedOverrideIsLoweredToWhatIsAvailableAndRestored) {
  const CpuCapability before = cpu::cpu_capability();
  {
    cpu::ScopedCpuCapability forced(CpuCapability::AVX512);
    EXPECT_EQ(cpu::cpu_capability(), cpu::available_capabilities().back());
    cpu::ScopedCpuCapability lowest(CpuCapability::Default);
    EXPECT_EQ(cpu::cpu_capability(), CpuCapability::Default);
  }
  EXPECT_EQ(cpu::cpu_capability(), before);
}

struct CapabilityCase {
  CpuCapability capability;
  std::string op;
};

std::vector<CapabilityCase> capability_cases() {
  std::vector<CapabilityCase> cases;
  for (CpuCapability c : cpu::available_capabilities()) {
    for (const OpSpec* op : all_ops()) cases.push_back({c, op->name()});
  }
  return cases;
}

class EveryCapability : public ::testing::TestWithParam<CapabilityCase> {};

TEST_P(EveryCapability, FusedForwardAndBackwardMatchTheFallback) {
  const CapabilityCase& c = GetParam();
  cpu::ScopedCpuCapability forced(c.capability);
  ASSERT_EQ(cpu::cpu_capability(), c.capability);
  const OpSpec* op = find_op(c.op);
  for (const std::string& set : op->shape_sets()) {
    if (set == "large") continue;
    for (at::ScalarType dtype : all_dtypes()) {
      SCOPED_TRACE(set + "/" + dtype_name(dtype));
      const OpCall call = op->make_inputs(set, dtype, c10::Device(c10::kCPU), 13);
      std::map<std::string, at::Tensor> fused_leaves, ref_leaves;
      auto forward = [&](Impl impl, std::map<std::string, at::Tensor>& leaves) {
        OpCall leaf_call = call;
        for (const std::string& name : op->grad_inputs()) {
          if (!call.has_tensor(name)) continue;
          leaves[name] = call.tensor(name).detach().clone().requires_grad_(true);
          leaf_call.tensors[name] = leaves[name];
        }
        return op->run(impl, leaf_call);
      };
      const at::Tensor fused = forward(Impl::Fused, fused_leaves);
      const at::Tensor ref = forward(Impl::Fallback, ref_leaves);
      EXPECT_EQ(close_mismatch(fused, ref, default_tolerance(dtype)), "");
      // grad_out = ones, expanded: every stride 0.
      fused.backward(at::ones({}, fused.options()).expand(fused.sizes()));
      ref.backward(at::ones({}, ref.options()).expand(ref.sizes()));
      for (const auto& [name, leaf] : ref_leaves) {
        SCOPED_TRACE("grad." + name);
        ASSERT_TRUE(fused_leaves.at(name).grad().defined());
        EXPECT_EQ(close_mismatch(fused_leaves.at(name).grad(), leaf.grad(), default_tolerance(dtype)), "");
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, EveryCapability, ::testing::ValuesIn(capability_cases()),
                         [](const ::testing::TestParamInfo<CapabilityCase>& info) {
                           return std::string(cpu::capability_name(info.param.capability)) + "_" + info.param.op;
                         });

}  // namespace
}  // namespace crossdev::ops::testing
