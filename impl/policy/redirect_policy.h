#pragma once
// Seed 002's redirect policy (the TorchDevice table and its "Additional Points") as a pure
// function of (request, host, state). State is explicit so tests and matrix rows are
// independent; the process-wide override lives in process_policy_state().
#include <string_view>

#include "device/host_profile.h"
#include "policy/decision.h"
#include "policy/preset.h"

namespace crossdev {

struct PolicyState {
  bool cpu_override = false;     // toggled by "cpu:-1"; process-wide in TorchDevice
  bool redirects_enabled = true;

  // redirects_enabled = TORCH_ALLOW_REDIRECTS is "true" (any case) || preset's platform default.
  static PolicyState for_preset(const Preset& preset, std::string_view allow_redirects_env);
  static PolicyState from_env(const Preset& preset);  // reads TORCH_ALLOW_REDIRECTS
};

bool allow_redirects_value(std::string_view env_value) noexcept;  // "true", case-insensitive

class RedirectPolicy {
 public:
  explicit RedirectPolicy(const Preset& preset = default_preset()) noexcept : preset_(&preset) {}

  const Preset& preset() const noexcept { return *preset_; }

  // The accelerator unrequested work lands on: the first kind of the preset's order that the
  // host has, as index 0; CPU when none is present.
  DeviceSpec default_device(const HostProfile& host) const noexcept;

  // request == nullptr means "no device given". Mutates state only for "cpu:-1".
  // Allocation-free unless INFO logging is enabled.
  Decision resolve(const DeviceSpec* request, const HostProfile& host, PolicyState& state,
                   Via via = Via::Create) const noexcept;

 private:
  Decision decide(const DeviceSpec* request, const HostProfile& host, PolicyState& state, Via via) const noexcept;
  const Preset* preset_;
};

// The process-wide state TorchDevice keeps (initialised from the environment on first use).
PolicyState& process_policy_state();

}  // namespace crossdev
