#include "policy/context_policy.h"

namespace crossdev {

const char* inference_context_name(InferenceContext ctx) noexcept {
  return ctx == InferenceContext::NoGrad ? "no_grad" : "inference_mode";
}

InferenceContext inference_context_for(DeviceKind kind) noexcept {
  // Seed 001: inference_mode on XLA fails with "Cannot set version_counter for inference tensor".
  return kind == DeviceKind::XLA ? InferenceContext::NoGrad : InferenceContext::InferenceMode;
}

const char* autocast_device_type(DeviceKind kind) noexcept { return kind_info(kind).autocast_type; }

Eligibility compile_eligibility(DeviceKind kind) noexcept {
  if (kind == DeviceKind::MPS) return {false, "torch.compile is not supported on MPS (seed 004): run eager"};
  return {true, "torch.compile supported"};
}

Eligibility distributed_eligibility(DeviceKind kind) noexcept {
  if (kind == DeviceKind::MPS) return {false, "Distributed training is not supported on MPS"};
  return {true, "distributed training supported"};
}

void require_distributed_supported(DeviceKind kind) {
  const Eligibility e = distributed_eligibility(kind);
  if (!e.eligible) throw PolicyError(e.reason);
}

InferenceContextGuard::InferenceContextGuard(DeviceKind kind) : context_(inference_context_for(kind)) {
  if (context_ == InferenceContext::NoGrad) {
    no_grad_.emplace();
  } else {
    inference_mode_.emplace(true);
  }
}

}  // namespace crossdev
