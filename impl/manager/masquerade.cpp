#include "manager/masquerade.h"

namespace crossdev::manager {
namespace {

DeviceProperties masquerade(const HostProfile& host, const DeviceSpec& device) {
  const auto& devices = host.presence(device.kind).devices;
  const auto index = static_cast<std::size_t>(device.effective_index());
  return index < devices.size() ? devices[index] : simulated_properties(device.kind, device.effective_index());
}

}  // namespace

MemoryStats simulated_memory_stats(const HostProfile& host, const DeviceSpec& device) {
  MemoryStats m;
  m.total = masquerade(host, device).total_memory;
  m.scope = "simulated";
  m.source = "seed 002 masquerade table (total only; a simulated device has no allocator to count)";
  m.simulated = true;
  return m;
}

EmptyCacheResult simulated_empty_cache(const DeviceSpec& device) {
  return {false, -1, "simulated " + device.str() + ": no cache to release"};
}

UnifiedProperties simulated_device_properties(const HostProfile& host, const DeviceSpec& device) {
  const DeviceProperties props = masquerade(host, device);
  UnifiedProperties p;
  p.name = props.name;
  p.device = canonical_device(device);
  p.total_memory = props.total_memory;
  p.major = props.major;
  p.minor = props.minor;
  p.multiprocessor_count = props.multiprocessor_count;
  p.simulated = true;
  p.source = "seed 002 masquerade table (HostProfile simulated_properties)";
  return p;
}

}  // namespace crossdev::manager
