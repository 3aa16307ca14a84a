#pragma once
// The active configuration of the sim device: which profile it emulates, how many devices it
// has, the unsupported-op list with its CPU switch, and numerics emulation. One process-wide
// value, replaced atomically; kernels read an immutable snapshot, so a switch mid-op is harmless.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/emulation_profile.h"

namespace crossdev::sim {

struct SimConfig {
  ProfileId profile = ProfileId::Plain;
  int device_count = 1;
  std::vector<std::string> unsupported_ops;  // "aten::op" or "aten::op.overload"
  bool unsupported_ops_on_cpu = false;       // the MPS CPU switch: PyTorch's PYTORCH_ENABLE_MPS_FALLBACK=1
  NumericsOptions numerics;
  // Differ from the CPU wherever a real device of the emulated kind may (divergence_switch.h). Starts
  // from CROSSDEV_SIM_DIVERGE; off keeps sim bit-identical with the CPU.
  bool diverge = false;
};

// A profile's defaults. `device_count` overrides the profile's default (checked against its maximum).
// The CPU switch starts from the profile's environment variable (e.g. PYTORCH_ENABLE_MPS_FALLBACK=1), the
// divergence switch from CROSSDEV_SIM_DIVERGE (c10::ValueError for a value it cannot parse).
SimConfig default_config(ProfileId id, std::optional<int> device_count = std::nullopt);

// Throws c10::Error naming the problem: device count outside [1, max] of the profile, or live
// sim allocations on a device index the new configuration would remove.
void set_config(const SimConfig& config);
std::shared_ptr<const SimConfig> current_config();
const EmulationProfile& current_profile();

// set_config(default_config(id, device_count)).
void set_profile(ProfileId id, std::optional<int> device_count = std::nullopt);

// Restores the previous configuration on scope exit (tests, the runner's per-row activation).
class ScopedConfig {
 public:
  explicit ScopedConfig(const SimConfig& config);
  ~ScopedConfig();
  ScopedConfig(const ScopedConfig&) = delete;
  ScopedConfig& operator=(const ScopedConfig&) = delete;

 private:
  std::shared_ptr<const SimConfig> previous_;
};

// True when `op` ("aten::mm", overload "out") is in the list, by bare name or name.overload.
bool op_listed(const std::vector<std::string>& list, const std::string& name, const std::string& overload);

}  // namespace crossdev::sim
