#pragma once
// The device chain: the order device_safe walks when a device gives up (recovery actions
// move_to_next_device and move_to_cpu): data, not code. The default is
// seed 003's MPS -> CUDA -> CPU; `parse` accepts any comma-separated list of kinds ending in
// cpu ("xla,cuda,cpu"). Each step names the device it left, the one it chose and why.
#include <string>
#include <string_view>
#include <vector>

#include "device/device_spec.h"
#include "device/host_profile.h"

namespace crossdev::manager {

struct ChainStep {
  DeviceSpec from;
  DeviceSpec to;
  std::string reason;  // "mps:0 failed (mps_placeholder_storage); cuda is present (simulated)"
};

class DeviceChain {
 public:
  static DeviceChain seed003();  // mps, cuda, cpu
  // Throws std::invalid_argument naming the bad item; the chain must end with cpu.
  static DeviceChain parse(std::string_view text);

  const std::vector<DeviceKind>& kinds() const noexcept { return kinds_; }
  std::string str() const;  // "mps,cuda,cpu"

  // The next device after `from` that `host` has. A device whose kind is not in the chain
  // falls straight to cpu. Returns `from` itself when there is nowhere left to go (cpu).
  ChainStep next(const DeviceSpec& from, const HostProfile& host, std::string_view why) const;

 private:
  std::vector<DeviceKind> kinds_;
};

}  // namespace crossdev::manager
