#pragma once
// The one DeviceManager API (seed 003's device manager, seed 004's auto-detection, seed
// 002's redirect policy and masquerade). It routes every question about a device to that
// kind's backend when the device is real, and to simulated_device.h when the host profile
// only simulates it, so each answer says which it is.
#include <functional>
#include <optional>
#include <string>

#include <c10/core/Device.h>

#include "manager/backend_registry.h"
#include "manager/capabilities.h"
#include "device/host_profile.h"
#include "manager/device_info.h"
#include "manager/device_chain.h"
#include "policy/redirect_policy.h"

namespace crossdev::manager {

struct ManagerConfig {
  const Preset* policy = &default_preset();  // redirect policy for ensure_device / placement
  // Auto-detection order. Seed 004's get_device(): CUDA > MPS > CPU, i.e. the cuda-first preset.
  const Preset* detect = find_preset("cuda-first");
  DeviceChain chain = DeviceChain::seed003();
  // Where tensors of a SIMULATED device keep their data. Unset: the cpu. The sim PrivateUse1
  // backend plugs in here (sim::device_for_simulated_kind), so simulated devices raise their
  // verbatim errors for real instead of through fault injection.
  std::function<std::optional<c10::Device>(const DeviceSpec&)> simulated_storage;
};

class DeviceManager {
 public:
  explicit DeviceManager(HostProfile host, ManagerConfig config = {});

  const HostProfile& host() const noexcept { return host_; }
  const ManagerConfig& config() const noexcept { return config_; }
  PolicyState& policy_state() noexcept { return state_; }

  // Throws std::invalid_argument when the host has no such device (kind absent, index too high).
  void require_present(const DeviceSpec& device) const;
  bool is_simulated(const DeviceSpec& device) const;
  // Where a tensor "on" this device keeps its data: the device itself when real, the CPU
  // when simulated.
  c10::Device storage_device(const DeviceSpec& device) const;

  Capabilities capabilities(const DeviceSpec& device) const;
  MemoryStats memory_stats(const DeviceSpec& device) const;
  EmptyCacheResult empty_cache(const DeviceSpec& device);  // logged in the op log
  UnifiedProperties properties(const DeviceSpec& device) const;

  struct Detection {
    DeviceSpec device;
    std::string reason;
  };
  // The first kind of the detect preset's order that this host has; cpu when none. Logged.
  Detection auto_detect() const;

  // The redirect policy applied to one request (nullptr: no device given), against this
  // manager's policy state.
  Decision resolve(const DeviceSpec* request, Via via = Via::To);

 private:
  HostProfile host_;
  ManagerConfig config_;
  PolicyState state_;
};

}  // namespace crossdev::manager
