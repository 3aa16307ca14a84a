// device_safe end to end on the sim PrivateUse1 backend: simulated devices keep their data on
// sim:<n> (ManagerConfig::simulated_storage), so the errors below are raised by the dispatcher
// for real — no fault injection — and each recovery must remove the cause. Results are
// compared with a float64 cpu reference. Everything here is simulated (sim runs on the host).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "manager/device_safe.h"
#include "sim/sim_backend.h"
#include "sim/simulated_device.h"

namespace crossdev::manager {
namespace {

DeviceManager sim_manager(const char* host_name) {
  HostProfile host = HostProfile::named_or_spec(host_name);
  ManagerConfig config;
  config.simulated_storage = [host](const DeviceSpec& d) -> std::optional<c10::Device> {
    const auto sim = sim::device_for_simulated_kind(d.kind, d.effective_index(), host);
    return sim ? std::optional<c10::Device>(sim->device) : std::nullopt;
  };
  return DeviceManager(std::move(host), config);
}

std::vector<at::Tensor> operands(at::ScalarType dtype = at::kFloat) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(11);
  return {at::randn({4, 5}, gen, at::TensorOptions().dtype(dtype)), at::randn({5, 3}, gen, at::TensorOptions().dtype(dtype))};
}

const SafeFn kMatmul = [](const std::vector<at::Tensor>& in, const AttemptContext&) {
  return std::vector<at::Tensor>{at::matmul(in[0], in[1])};
};

void expect_matches(const at::Tensor& out, const std::vector<at::Tensor>& originals) {
  const at::Tensor ref = at::matmul(originals[0].to(at::kDouble), originals[1].to(at::kDouble));
  EXPECT_TRUE(at::allclose(out.to(c10::kCPU).to(at::kDouble), ref, 1.3e-6, 1e-5));
}

class SimEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override { sim::register_backend(); }
};

TEST_F(SimEndToEnd, MpsPlaceholderFromMixingFallsBackToCpu) {
  DeviceManager m = sim_manager("mps");
  const auto originals = operands();
  std::vector<Placed> in = place_on(m, originals, {parse_device("mps"), parse_device("cpu")});
  ASSERT_EQ(in[0].tensor.device().type(), c10::DeviceType::PrivateUse1);
  SafeOptions options;
  options.device = parse_device("mps");
  const SafeResult r = device_safe(m, kMatmul, std::move(in), options);
  ASSERT_EQ(r.report.attempts.size(), 2u) << r.report.summary();
  EXPECT_EQ(r.report.attempts[0].category, "mps_placeholder_storage") << r.report.attempts[0].error_message;
  EXPECT_EQ(r.report.final_device.str(), "cpu");
  expect_matches(r.outputs[0], originals);
}

TEST_F(SimEndToEnd, CudaDeviceMismatchMovesToOneDevice) {
  DeviceManager m = sim_manager("cuda-x2");
  const auto originals = operands();
  std::vector<Placed> in = place_on(m, originals, {parse_device("cuda:0"), parse_device("cuda:1")});
  SafeOptions options;
  options.device = parse_device("cuda:0");
  const SafeResult r = device_safe(m, kMatmul, std::move(in), options);
  ASSERT_EQ(r.report.attempts.size(), 2u) << r.report.summary();
  EXPECT_EQ(r.report.attempts[0].category, "device_mismatch") << r.report.attempts[0].error_message;
  EXPECT_EQ(r.report.final_device.str(), "cuda:0");
  EXPECT_EQ(r.outputs[0].device().type(), c10::DeviceType::PrivateUse1);  // computed on the sim device
  expect_matches(r.outputs[0], originals);
}

TEST_F(SimEndToEnd, MpsFloat64IsCastToFloat32) {
  DeviceManager m = sim_manager("mps");
  const auto originals = operands(at::kDouble);
  // The call itself moves its float64 inputs to the device, as user code does: that raises.
  const SafeFn to_device_then_matmul = [](const std::vector<at::Tensor>& in, const AttemptContext& ctx) {
    return std::vector<at::Tensor>{at::matmul(in[0].to(ctx.storage), in[1].to(ctx.storage))};
  };
  SafeOptions options;
  options.device = parse_device("mps");
  const SafeResult r = device_safe(m, to_device_then_matmul, place_as_is(originals), options);
  ASSERT_EQ(r.report.attempts.size(), 2u) << r.report.summary();
  EXPECT_EQ(r.report.attempts[0].error_type, "TypeError");
  EXPECT_EQ(r.report.attempts[0].category, "float64_unsupported");
  EXPECT_EQ(r.outputs[0].scalar_type(), at::kFloat);
  ASSERT_FALSE(r.report.casts.empty());
  expect_matches(r.outputs[0], originals);
}

TEST_F(SimEndToEnd, TpuInferenceModeRetriesUnderNoGrad) {
  DeviceManager m = sim_manager("tpu");
  const auto originals = operands();
  SafeOptions options;
  options.device = parse_device("xla:0");
  options.inference = InferenceContext::InferenceMode;
  const SafeResult r = device_safe(m, kMatmul, place_on(m, originals, {*options.device, *options.device}), options);
  ASSERT_EQ(r.report.attempts.size(), 2u) << r.report.summary();
  EXPECT_EQ(r.report.attempts[0].category, "inference_tensor_version_counter") << r.report.attempts[0].error_message;
  EXPECT_EQ(r.report.attempts[1].inference, "no_grad");
  EXPECT_EQ(r.report.final_device.str(), "xla:0");
  expect_matches(r.outputs[0], originals);
}

}  // namespace
}  // namespace crossdev::manager
