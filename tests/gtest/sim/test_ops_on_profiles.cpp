// Every op of the ops library (impl/ops, seed 000) on the sim device under every emulation profile:
// the fused kernel is unavailable on sim, so dispatch runs the fallback and records why; the
// result matches the same fallback on CPU; profile constraints (mps-like float64, tpu-like
// inference_mode) surface with their verbatim texts on real op inputs.
#include "sim_test_support.h"

#include <cctype>

#include <ATen/core/grad_mode.h>
#include <c10/core/InferenceMode.h>

#include "ops/op_spec.h"

namespace crossdev::sim::testing {
namespace {

struct OpProfileCase {
  const ops::OpSpec* op;
  ProfileId profile;
};

std::vector<OpProfileCase> all_cases() {
  std::vector<OpProfileCase> cases;
  for (const ops::OpSpec* op : ops::all_ops())
    for (ProfileId id : kAllProfiles) cases.push_back({op, id});
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<OpProfileCase>& info) {
  std::string name = std::string(info.param.op->name()) + "_" + profile_name(info.param.profile);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

class SimOpsOnProfilesTest : public SimTest, public ::testing::WithParamInterface<OpProfileCase> {};

// float32 tolerance of torch.testing.assert_close; composite decompositions (native_layer_norm on a
// backend without a kernel) may differ from the CPU kernel by rounding only.
bool close_fp32(const at::Tensor& actual, const at::Tensor& expected) {
  return at::allclose(actual.to(at::kDouble), expected.to(at::kDouble), 1.3e-6, 1e-5, /*equal_nan=*/true);
}

TEST_P(SimOpsOnProfilesTest, FallbackRunsOnSimAndMatchesCpu) {
  const auto [op, id] = GetParam();
  use(id);
  at::NoGradGuard no_grad;  // the tpu-like recipe (seed 001); harmless elsewhere
  for (const std::string& shape_set : op->shape_sets()) {
    SCOPED_TRACE(std::string(op->name()) + "/" + shape_set + " on " + profile_name(id));
    const ops::OpCall cpu_call = op->make_inputs(shape_set, at::kFloat, at::kCPU, 1);
    const ops::OpCall sim_call = op->make_inputs(shape_set, at::kFloat, sim_device(0), 1);
    const at::Tensor expected = op->run(ops::Impl::Fallback, cpu_call);

    ops::DispatchRecord record;
    const at::Tensor actual = op->dispatch(sim_call, &record);
    ASSERT_TRUE(actual.is_privateuseone());
    EXPECT_EQ(record.ran, ops::Impl::Fallback);
    ASSERT_FALSE(record.rejected.empty()) << "the report must say why the fused kernel did not run";
    EXPECT_EQ(record.rejected.front().impl, ops::Impl::Fused);
    EXPECT_NE(record.rejected.front().reason.find("device_has_fused_kernel"), std::string::npos)
        << record.rejected.front().reason;
    EXPECT_TRUE(close_fp32(actual.to(at::kCPU), expected));
  }
}

TEST_P(SimOpsOnProfilesTest, ProfileConstraintsSurfaceOnOpInputs) {
  const auto [op, id] = GetParam();
  use(id);
  const std::string shape_set = "basic";
  if (id == ProfileId::MpsLike) {
    EXPECT_EQ(error_text([&] { op->make_inputs(shape_set, at::kDouble, sim_device(0), 1); }),
              "Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64. Please use "
              "float32 instead.");
  } else {
    EXPECT_NO_THROW(op->make_inputs(shape_set, at::kDouble, sim_device(0), 1));
  }
  const ops::OpCall call = op->make_inputs(shape_set, at::kFloat, sim_device(0), 1);
  c10::InferenceMode inference;
  const std::string text = error_text([&] { op->dispatch(call); });
  if (id == ProfileId::TpuLike) EXPECT_EQ(text, "Cannot set version_counter for inference tensor");
  else EXPECT_EQ(text, "<no error>");
}

INSTANTIATE_TEST_SUITE_P(AllOps, SimOpsOnProfilesTest, ::testing::ValuesIn(all_cases()), case_name);

}  // namespace
}  // namespace crossdev::sim::testing
