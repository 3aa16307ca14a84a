// device_safe's contract, beyond the matrix rows: unclassified errors leave as the same
// object, attempts are bounded, a rejected result is never a success, reports survive a
// throw, and fault plans are scoped to their thread and lifetime.
#include <stdexcept>
#include <thread>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "manager/device_safe.h"
#include "manager/fault_injection.h"

namespace crossdev::manager {
namespace {

DeviceManager manager_on(const char* host) { return DeviceManager(HostProfile::named_or_spec(host)); }

std::vector<Placed> cpu_inputs() { return place_as_is({at::ones({2, 2}), at::full({2, 2}, 2.0)}); }

const SafeFn kAdd = [](const std::vector<at::Tensor>& in, const AttemptContext&) {
  return std::vector<at::Tensor>{in[0] + in[1]};
};

TEST(DeviceSafe, UnclassifiedErrorIsTheSameObject) {
  DeviceManager m = manager_on("cpu-only");
  std::exception_ptr thrown;
  const SafeFn fn = [&](const std::vector<at::Tensor>&, const AttemptContext&) -> std::vector<at::Tensor> {
    try {
      throw std::domain_error("nothing a device can fix");
    } catch (...) {
      thrown = std::current_exception();
      throw;
    }
  };
  SafeReport report;
  try {
    (void)device_safe(m, fn, cpu_inputs(), {}, &report);
    FAIL() << "expected the error to propagate";
  } catch (const std::domain_error& e) {
    EXPECT_EQ(std::current_exception(), thrown);  // identity, not just equal text
    EXPECT_STREQ(e.what(), "nothing a device can fix");
  }
  EXPECT_EQ(report.outcome, "rethrown");
  ASSERT_EQ(report.attempts.size(), 1u);
  EXPECT_TRUE(report.attempts[0].category.empty());
}

TEST(DeviceSafe, AttemptsAreBoundedAndTheLastErrorRethrown) {
  DeviceManager m = manager_on("cuda-x1");
  FaultPlan plan({Fault{"*", DeviceKind::CUDA, {}, -1, "OutOfMemoryError", "CUDA out of memory. Tried to allocate 2.00 MiB."}});
  ScopedFaultPlan scoped(plan);
  SafeOptions options;
  options.device = parse_device("cuda:0");
  options.allow_chain_steps = false;  // only empty_cache is possible, and it does not help
  options.max_attempts = 5;
  SafeReport report;
  EXPECT_THROW((void)device_safe(m, kAdd, place_on(m, {at::ones({2}), at::ones({2})}, {*options.device, *options.device}),
                                 options, &report),
               c10::OutOfMemoryError);
  // Stage 1 (empty_cache) was tried; stage 2 (move_to_cpu) was refused, so it stopped at 2 attempts.
  EXPECT_EQ(report.attempts.size(), 2u);
  EXPECT_EQ(report.outcome, "recovery_failed");
  EXPECT_EQ(plan.fired(), 2);
}

TEST(DeviceSafe, MaxAttemptsOneMeansNoRetry) {
  DeviceManager m = manager_on("mps");
  FaultPlan plan({Fault{"*", DeviceKind::MPS, {}, -1, "RuntimeError", "Placeholder storage has not been allocated on MPS device!"}});
  ScopedFaultPlan scoped(plan);
  SafeOptions options;
  options.device = parse_device("mps");
  options.max_attempts = 1;
  SafeReport report;
  EXPECT_THROW((void)device_safe(m, kAdd, cpu_inputs(), options, &report), c10::Error);
  EXPECT_EQ(report.outcome, "exhausted");
  EXPECT_EQ(report.attempts.size(), 1u);
  EXPECT_EQ(report.attempts[0].category, "mps_placeholder_storage");
}

// device_safe of kAdd on cuda:0 of a cuda-x1 host where every CUDA call fails with `message` (a
// sticky CUDA error), at most max_attempts attempts: it throws c10::Error. Its report, and how often
// the fault fired.
struct StickyRun {
  SafeReport report;
  int fired = 0;
};
StickyRun run_with_sticky_cuda_error(const char* message, int max_attempts) {
  DeviceManager m = manager_on("cuda-x1");
  FaultPlan plan({Fault{"*", DeviceKind::CUDA, {}, -1, "RuntimeError", message}});
  ScopedFaultPlan scoped(plan);
  SafeOptions options;
  options.device = parse_device("cuda:0");
  options.max_attempts = max_attempts;
  StickyRun run;
  EXPECT_THROW((void)device_safe(m, kAdd, place_on(m, {at::ones({2}), at::ones({2})}, {*options.device, *options.device}),
                                 options, &run.report),
               c10::Error);
  run.fired = plan.fired();
  return run;
}

// After a sticky CUDA error every later CUDA call fails too (empty_cache, the copy to the cpu), so
// device_safe must not retry: one attempt, nothing applied, the error rethrown, and the report saying
// what to do instead.
TEST(DeviceSafe, StickyCudaErrorIsNotRetried) {
  const StickyRun run = run_with_sticky_cuda_error("CUDA error: device-side assert triggered", 5);
  const SafeReport& report = run.report;
  EXPECT_EQ(report.outcome, "needs_new_process");
  ASSERT_EQ(report.attempts.size(), 1u);
  EXPECT_EQ(run.fired, 1);
  EXPECT_EQ(report.attempts[0].category, "cuda_sticky_error");
  EXPECT_TRUE(report.attempts[0].recovery.empty());
  EXPECT_EQ(report.cache_flushes, 0);
  EXPECT_TRUE(report.chain_steps.empty());
  EXPECT_TRUE(report.moves.empty());
  EXPECT_EQ(report.final_device.str(), "cuda:0");
  const std::string& advice = report.attempts[0].recovery_detail;
  for (const char* needle : {"Restart the process", "CUDA_LAUNCH_BLOCKING=1", "TORCH_USE_CUDA_DSA"})
    EXPECT_NE(advice.find(needle), std::string::npos) << advice;
  EXPECT_NE(report.summary().find("Restart the process"), std::string::npos) << report.summary();
}

TEST(DeviceSafe, StickyCudaErrorIsNeedsNewProcessEvenWithOneAttempt) {
  const StickyRun run = run_with_sticky_cuda_error("CUDA error: an illegal memory access was encountered", 1);
  EXPECT_EQ(run.report.outcome, "needs_new_process");  // not "exhausted": retrying more would not have helped
}

TEST(DeviceSafe, RejectedResultIsNeverASuccess) {
  DeviceManager m = manager_on("mps");
  FaultPlan plan({Fault{"*", DeviceKind::MPS, {}, -1, "RuntimeError", "Placeholder storage has not been allocated on MPS device!"}});
  ScopedFaultPlan scoped(plan);
  SafeOptions options;
  options.device = parse_device("mps");
  options.validate = [](const std::vector<at::Tensor>& out, const AttemptContext&) {
    return out[0].sum().item<double>() == 12.0 ? std::string() : std::string("wrong sum");
  };
  const SafeFn wrong = [](const std::vector<at::Tensor>& in, const AttemptContext&) {
    return std::vector<at::Tensor>{in[0] - in[1]};
  };
  try {
    (void)device_safe(m, wrong, cpu_inputs(), options);
    FAIL() << "a wrong result must not come back as a success";
  } catch (const RecoveryRejected& e) {
    EXPECT_EQ(e.report().outcome, "rejected");
    EXPECT_EQ(e.report().attempts.back().outcome, "rejected");
    EXPECT_EQ(e.report().final_device.str(), "cpu");
  }
  // The same validator accepts the right computation.
  const SafeResult ok = device_safe(m, kAdd, cpu_inputs(), options);
  EXPECT_EQ(ok.report.outcome, "recovered");
  EXPECT_DOUBLE_EQ(ok.outputs[0].sum().item<double>(), 12.0);
}

TEST(DeviceSafe, ChainStepIsLoggedAsSimulatedAndCarriesTheReason) {
  DeviceManager m = manager_on("cuda+mps");
  FaultPlan plan({Fault{"*", DeviceKind::MPS, {}, -1, "RuntimeError", "Placeholder storage has not been allocated on MPS device!"}});
  ScopedFaultPlan scoped(plan);
  SafeOptions options;
  options.device = parse_device("mps");
  const SafeResult r = device_safe(m, kAdd, place_on(m, {at::ones({2}), at::ones({2})}, {*options.device, *options.device}), options);
  ASSERT_EQ(r.report.chain_steps.size(), 1u);
  EXPECT_EQ(r.report.chain_steps[0].to.str(), "cuda:0");
  EXPECT_NE(r.report.chain_steps[0].reason.find("mps_placeholder_storage"), std::string::npos) << r.report.chain_steps[0].reason;
  EXPECT_TRUE(r.report.simulated);
  for (const auto& mv : r.report.moves) EXPECT_TRUE(mv.simulated);
}

TEST(FaultInjection, PlanIsScopedToItsThreadAndLifetime) {
  DeviceManager m = manager_on("cpu-only");
  FaultPlan plan({Fault{"*", std::nullopt, {}, -1, "RuntimeError", "CUDA error: injected"}});
  {
    ScopedFaultPlan scoped(plan);
    SafeOptions once;
    once.max_attempts = 1;
    EXPECT_THROW((void)device_safe(m, kAdd, cpu_inputs(), once), c10::Error);
    bool other_thread_clean = false;
    std::thread([&] {
      other_thread_clean = device_safe(m, kAdd, cpu_inputs()).report.outcome == "ok";
    }).join();
    EXPECT_TRUE(other_thread_clean);
  }
  EXPECT_EQ(device_safe(m, kAdd, cpu_inputs()).report.outcome, "ok");
}

TEST(FaultInjection, ConditionsGateTheFault) {
  DeviceManager m = manager_on("mps");
  Fault f{"*", DeviceKind::MPS, {"float64_input"}, -1, "TypeError",
          "Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64. Please use float32 instead."};
  FaultPlan plan({f});
  ScopedFaultPlan scoped(plan);
  SafeOptions options;
  options.device = parse_device("mps");
  const DeviceSpec mps = parse_device("mps");
  // float32 inputs: the condition does not hold, nothing fires.
  EXPECT_EQ(device_safe(m, kAdd, place_on(m, {at::ones({2}), at::ones({2})}, {mps, mps}), options).report.outcome, "ok");
  EXPECT_EQ(plan.fired(), 0);
  EXPECT_THROW(plan.add(Fault{"*", std::nullopt, {"full_moon"}, -1, "RuntimeError", "x"}), std::invalid_argument);
  EXPECT_THROW(plan.add(Fault{"*", std::nullopt, {}, -1, "KeyboardInterrupt", "x"}), std::invalid_argument);
}

}  // namespace
}  // namespace crossdev::manager
