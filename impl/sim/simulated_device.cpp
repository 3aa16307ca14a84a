#include "sim/simulated_device.h"

#include <stdexcept>

#include "sim/sim_backend.h"
#include "sim/sim_config.h"

namespace crossdev::sim {

std::string SimulatedDevice::label() const {
  return device.str() + " (simulated " + kind_name(emulates) + ":" + std::to_string(device.index()) + ", " +
         profile_name(profile) + ")";
}

SimulatedDevice sim_device_for(DeviceKind kind, int index, int device_count) {
  const auto id = profile_for_kind(kind);
  if (!id) throw std::invalid_argument(std::string("sim: no emulation profile for device kind '") + kind_name(kind) +
                                       "'; expected one of " + emulated_kind_list());
  const int count = device_count > 0 ? device_count : profile(*id).default_device_count;
  if (index < 0 || index >= count)
    throw std::invalid_argument("sim: " + std::string(kind_name(kind)) + ":" + std::to_string(index) +
                                " is outside the " + std::to_string(count) + " simulated device(s)");
  register_backend();
  const auto active = current_config();
  if (active->profile != *id || active->device_count != count) set_profile(*id, count);
  return SimulatedDevice{sim_device(index), kind, *id};
}

std::optional<SimulatedDevice> device_for_simulated_kind(DeviceKind kind, int index, const HostProfile& host) {
  if (host.provenance(kind) != Provenance::Simulated) return std::nullopt;
  return sim_device_for(kind, index, host.count(kind));
}

}  // namespace crossdev::sim
