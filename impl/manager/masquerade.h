#pragma once
// The masquerade (seed 002): answers for devices a host profile only simulates. Nothing here is measured: memory
// counters are unknown (-1) except the masquerade's total, empty_cache has nothing to
// release, and properties are seed 002's masquerade table. Every answer carries simulated=true.
#include "device/host_profile.h"
#include "manager/device_info.h"

namespace crossdev::manager {

MemoryStats simulated_memory_stats(const HostProfile& host, const DeviceSpec& device);
EmptyCacheResult simulated_empty_cache(const DeviceSpec& device);
UnifiedProperties simulated_device_properties(const HostProfile& host, const DeviceSpec& device);

}  // namespace crossdev::manager
