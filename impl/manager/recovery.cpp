#include "manager/recovery.h"

#include "util/named_table.h"

#include "manager/op_log.h"

namespace crossdev::manager {
namespace {

std::string move_to_common_device(AttemptState& s, const ErrorInfo&, const std::string&) {
  if (same_device(s.inputs)) throw RecoveryImpossible("inputs are already on one device (" + s.device.str() + ")");
  const DeviceConsistency c = ensure_device(s.manager, s.inputs);
  s.moves.insert(s.moves.end(), c.moves.begin(), c.moves.end());
  s.device = c.target;
  return "moved " + std::to_string(c.moves.size()) + " input(s) to " + c.target.str() + " (" + c.decision.describe() + ")";
}

std::string cast_to_common_dtype(AttemptState& s, const ErrorInfo&, const std::string&) {
  DtypeOptions options;
  options.unify = true;
  const auto casts = ensure_dtype(s.manager, s.inputs, options);
  if (casts.empty()) throw RecoveryImpossible("inputs already share a dtype the device supports");
  s.casts.insert(s.casts.end(), casts.begin(), casts.end());
  return "cast " + std::to_string(casts.size()) + " input(s) to " + dtype_name(casts.back().to);
}

std::string cast_to_supported_dtype(AttemptState& s, const ErrorInfo&, const std::string&) {
  DtypeOptions options;
  options.device = s.device;  // what the device the call runs on can hold
  const auto casts = ensure_dtype(s.manager, s.inputs, options);
  if (casts.empty()) throw RecoveryImpossible("no input has a dtype " + s.device.str() + " lacks");
  s.casts.insert(s.casts.end(), casts.begin(), casts.end());
  return "cast " + std::to_string(casts.size()) + " input(s) " + dtype_name(casts.back().from) + " -> " +
         dtype_name(casts.back().to) + ": " + casts.back().reason;
}

std::string empty_cache(AttemptState& s, const ErrorInfo&, const std::string&) {
  const EmptyCacheResult r = s.manager.empty_cache(s.device);
  s.cache_flushes.push_back(r);
  return "empty_cache(" + s.device.str() + "): " + r.detail;
}

// move_to_next_device and move_to_cpu: leave the failing device for another, recorded as a ChainStep.
std::string leave_device(AttemptState& s, const std::string& category, bool straight_to_cpu) {
  if (!s.allow_chain_steps) throw RecoveryImpossible("device chain steps disabled by the caller (allow_chain_steps=false)");
  ChainStep step;
  if (straight_to_cpu) {
    step = {s.device, DeviceSpec::of(DeviceKind::CPU), s.device.str() + " failed (" + category + "); move to cpu"};
  } else {
    step = s.manager.config().chain.next(s.device, s.manager.host(), category);
  }
  if (step.to.same_device(s.device)) throw RecoveryImpossible("no device to move to from " + s.device.str());
  {
    ScopedOp op("chain_step", "chain_step", step.to.str());
    op.field("from", step.from.str());
    op.field("reason", step.reason);
  }
  // The new device may not hold every dtype the old one did: cast first, so the move itself
  // cannot fail on it (a float64 tensor cannot even be copied to MPS).
  DtypeOptions options;
  options.device = step.to;
  const auto casts = ensure_dtype(s.manager, s.inputs, options);
  s.casts.insert(s.casts.end(), casts.begin(), casts.end());
  const auto moves = move_to(s.manager, s.inputs, step.to, step.reason);
  s.moves.insert(s.moves.end(), moves.begin(), moves.end());
  s.device = step.to;
  s.chain_steps.push_back(step);
  return step.reason;
}

std::string move_to_next_device(AttemptState& s, const ErrorInfo&, const std::string& category) {
  return leave_device(s, category, false);
}

std::string move_to_cpu(AttemptState& s, const ErrorInfo&, const std::string& category) {
  return leave_device(s, category, true);
}

// Seed 001: inference_mode breaks XLA's version counters; torch.no_grad() is the fix.
std::string use_no_grad(AttemptState& s, const ErrorInfo&, const std::string&) {
  if (s.inference == InferenceContext::NoGrad) throw RecoveryImpossible("already running under no_grad");
  s.inference = InferenceContext::NoGrad;
  return "re-run under torch.no_grad() instead of torch.inference_mode() (seed 001)";
}

// A sticky CUDA error (device-side assert, illegal address, ...) leaves "the process in an
// inconsistent state and any further CUDA work will return the same error. To continue using
// CUDA, the process must be terminated and relaunched" (CUDA Runtime API, cudaError). Every
// in-process step fails with it: empty_cache, and the device-to-host copy move_to_cpu needs.
// So nothing is retried; the user is told what to do instead.
std::string restart_process(AttemptState& s, const ErrorInfo&, const std::string& category) {
  throw ProcessRestartRequired(
      "no in-process recovery: a " + category + " on " + s.device.str() +
      " leaves this process's CUDA context unusable, and every later CUDA call (empty_cache and copies to the cpu "
      "included) fails with the same error. Restart the process. To find the kernel that failed, rerun with "
      "CUDA_LAUNCH_BLOCKING=1 (launches become synchronous, so the stack trace points at it); for a device-side "
      "assert, a PyTorch built with TORCH_USE_CUDA_DSA=1 also reports the assertion's file, line and thread.");
}

const std::vector<RecoveryAction> kActions = {
    {"move_to_common_device", "move every input to one device chosen by the redirect policy", move_to_common_device, false},
    {"cast_to_common_dtype", "promote every input to one dtype (torch.promote_types)", cast_to_common_dtype, false},
    {"cast_to_supported_dtype", "cast inputs the device cannot hold (float64 on MPS -> float32)", cast_to_supported_dtype, false},
    {"empty_cache", "release the device's cached memory, then retry", empty_cache, false},
    {"move_to_next_device", "move to the next device of the device chain present on the host", move_to_next_device, false},
    {"move_to_cpu", "move to the cpu", move_to_cpu, false},
    {"use_no_grad", "switch the inference context from inference_mode to no_grad", use_no_grad, false},
    {"restart_process", "retry nothing: the error left the device unusable until the process restarts; say so", restart_process,
     true},
};

}  // namespace

const std::vector<RecoveryAction>& recovery_actions() { return kActions; }

const RecoveryAction* find_recovery(std::string_view name) {
  return named::find(kActions, name);
}

std::string recovery_action_list() {
  return named::names(kActions);
}

}  // namespace crossdev::manager
