#pragma once
// Per-device execution-context decisions from seeds 001 and 004:
//  - the autocast device_type ("tpu" -> "xla");
//  - the inference context: torch.no_grad() on XLA (inference_mode breaks its version
//    counters), torch.inference_mode() elsewhere — plus a guard that really applies it;
//  - torch.compile eligibility (not on MPS) and distributed support (a clear error on MPS).
#include <optional>
#include <stdexcept>

#include <c10/core/GradMode.h>
#include <c10/core/InferenceMode.h>

#include "device/device_kind.h"

namespace crossdev {

enum class InferenceContext : std::uint8_t { InferenceMode, NoGrad };
const char* inference_context_name(InferenceContext ctx) noexcept;  // "inference_mode" / "no_grad"
InferenceContext inference_context_for(DeviceKind kind) noexcept;

const char* autocast_device_type(DeviceKind kind) noexcept;

struct Eligibility {
  bool eligible;
  const char* reason;
};
Eligibility compile_eligibility(DeviceKind kind) noexcept;
Eligibility distributed_eligibility(DeviceKind kind) noexcept;

class PolicyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// Throws PolicyError("Distributed training is not supported on MPS", seed 004's text).
void require_distributed_supported(DeviceKind kind);

// RAII: enters the device's inference context for its lifetime.
class InferenceContextGuard {
 public:
  explicit InferenceContextGuard(DeviceKind kind);
  InferenceContext context() const noexcept { return context_; }

 private:
  InferenceContext context_;
  std::optional<c10::InferenceMode> inference_mode_;
  std::optional<c10::NoGradGuard> no_grad_;
};

}  // namespace crossdev
