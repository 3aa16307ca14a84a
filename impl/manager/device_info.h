#pragma once
// Unified memory statistics and device properties: the same fields for every device, with
// -1 where a value is not known and a `source` that says where the numbers come from.
#include <string>

#include "device/device_spec.h"
#include "device/memory_stats.h"  // MemoryStats: one record for the manager and the sim backend

namespace crossdev::manager {

// One spelling per physical device: "cpu" and "mps" (single-device kinds, seed 002's
// "None and 0 are the same"), "cuda:0" with an explicit index elsewhere; cpu:-1 becomes cpu.
DeviceSpec canonical_device(const DeviceSpec& device) noexcept;

struct EmptyCacheResult {
  bool supported = false;     // the device has a cache to empty
  long long released = -1;    // bytes released where measurable, else -1
  std::string detail;         // what was done, for the log
};

// torch.cuda.get_device_properties-shaped, for any device (seed 002's masquerade table).
struct UnifiedProperties {
  std::string name;
  DeviceSpec device;
  long long total_memory = -1;
  int major = -1, minor = -1;        // compute capability, or the masquerade's
  int multiprocessor_count = -1;
  bool simulated = false;
  std::string source;
};

}  // namespace crossdev::manager
