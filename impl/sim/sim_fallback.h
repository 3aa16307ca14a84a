#pragma once
// The boxed CPU fallback of the sim device: every op without a native sim kernel runs here, in the
// way PyTorch's MPS fallback works (aten/src/ATen/native/mps/MPSFallback.mm): enforce the active
// profile, then at::native::cpu_fallback moves the arguments to the CPU, runs the CPU kernel and
// moves results back. Each execution is recorded with the reason it took this path, so reports
// can say why an op did not run natively.
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <cstdint>
#include <map>
#include <string>

namespace crossdev::sim {

enum class FallbackReason : std::uint8_t {
  NoNativeSimKernel,   // the sim device computes through the CPU: expected for every computing op
  ProfileUnsupported,  // the profile lists the op as missing and its fallback switch is on (MPS-style)
};
const char* fallback_reason_text(FallbackReason reason) noexcept;

struct FallbackRecord {
  FallbackReason reason = FallbackReason::NoNativeSimKernel;
  std::int64_t count = 0;
};

void sim_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

// "aten::add.Tensor" -> record, since the last reset.
std::map<std::string, FallbackRecord> fallback_records();
void reset_fallback_records();

}  // namespace crossdev::sim
