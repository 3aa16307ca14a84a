// Runtime CPU dispatch (impl/ops/cpu/capability.h, dispatch.h): every capability this build and
// CPU can run, forced in turn with ScopedCpuCapability, gives fused forward outputs and fused
// backward gradients within assert_close's default tolerance of the fallback, and within twice
// that of the best copy this host runs (on an AVX512 host: the DEFAULT and AVX2 copies against
// the AVX512 one), for every op x shape set (but `large`) x dtype. The backward is driven with an
// expanded (stride-0) grad_out, what `out.sum().backward()` passes, so the row kernels' strided
// reads are exercised too. tests/python/opinfo/test_cpu_capability.py does the same through
// CROSSDEV_CPU_CAPABILITY; check_capability_symbols.py checks that the copies share no code.
#include "ops/cpu/capability.h"
#include "ops/cpu/dispatch.h"
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

// The entry a call runs: the highest built copy not above the chosen capability.
TEST(CpuCapability, DispatchRunsTheHighestBuiltCopyNotAboveTheChoice) {
  const cpu::CpuKernelEntry lowest{}, highest{};
  const cpu::CpuKernelEntries entries = {&lowest, nullptr, &highest};  // AVX2 not built
  for (CpuCapability c : cpu::available_capabilities()) {
    cpu::ScopedCpuCapability forced(c);
    const CpuCapability expected = c == CpuCapability::AVX512 ? CpuCapability::AVX512 : CpuCapability::Default;
    EXPECT_EQ(cpu::running_capability(entries), expected) << cpu::capability_name(c);
    EXPECT_EQ(&cpu::pick(entries, "test"), c == CpuCapability::AVX512 ? &highest : &lowest);
  }
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

// Fused forward output and gradients of one call, with the copy `capability` forced.
std::vector<std::pair<std::string, at::Tensor>> fused_results(const OpSpec* op, const OpCall& call, Impl impl,
                                                              CpuCapability capability) {
  cpu::ScopedCpuCapability forced(capability);
  EXPECT_EQ(cpu::cpu_capability(), capability);
  OpCall leaf_call = call;
  std::map<std::string, at::Tensor> leaves;
  for (const std::string& name : op->grad_inputs()) {
    if (!call.has_tensor(name)) continue;
    leaves[name] = call.tensor(name).detach().clone().requires_grad_(true);
    leaf_call.tensors[name] = leaves[name];
  }
  const at::Tensor out = op->run(impl, leaf_call);
  // grad_out = ones, expanded: every stride 0.
  out.backward(at::ones({}, out.options()).expand(out.sizes()));
  std::vector<std::pair<std::string, at::Tensor>> results{{"out", out.detach()}};
  for (const auto& [name, leaf] : leaves) results.emplace_back("grad." + name, leaf.grad());
  return results;
}

TEST_P(EveryCapability, FusedForwardAndBackwardMatchTheFallbackAndTheBestCopy) {
  const CapabilityCase& c = GetParam();
  const CpuCapability best = cpu::available_capabilities().back();
  const OpSpec* op = find_op(c.op);
  for (const std::string& set : op->shape_sets()) {
    if (set == "large") continue;
    for (at::ScalarType dtype : all_dtypes()) {
      SCOPED_TRACE(set + "/" + dtype_name(dtype));
      const OpCall call = op->make_inputs(set, dtype, c10::Device(c10::kCPU), 13);
      const auto fused = fused_results(op, call, Impl::Fused, c.capability);
      const auto ref = fused_results(op, call, Impl::Fallback, c.capability);
      ASSERT_EQ(fused.size(), ref.size());
      const Tolerance tol = default_tolerance(dtype);
      for (std::size_t k = 0; k < fused.size(); ++k) {
        SCOPED_TRACE(fused[k].first);
        ASSERT_TRUE(fused[k].second.defined());
        EXPECT_EQ(close_mismatch(fused[k].second, ref[k].second, tol), "");
      }
      if (c.capability == best) continue;
      // Two copies each within tol of the fallback: within twice tol of each other.
      const auto best_fused = fused_results(op, call, Impl::Fused, best);
      for (std::size_t k = 0; k < fused.size(); ++k) {
        SCOPED_TRACE(fused[k].first + std::string(" vs the ") + cpu::capability_name(best) + " copy");
        EXPECT_EQ(close_mismatch(fused[k].second, best_fused[k].second, {2 * tol.rtol, 2 * tol.atol}), "");
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
