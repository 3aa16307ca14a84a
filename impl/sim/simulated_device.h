#pragma once
// The bridge between crossdev's device kinds (cuda/mps/xpu/xla, as HostProfile and the redirect
// policy know them) and the sim device. A simulated kind runs on sim:<index> with the matching
// emulation profile active; a real device of that kind always takes precedence.
#include <optional>
#include <string>

#include <c10/core/Device.h>

#include "device/device_kind.h"
#include "device/host_profile.h"
#include "sim/emulation_profile.h"

namespace crossdev::sim {

struct SimulatedDevice {
  c10::Device device;                          // sim:<index>
  DeviceKind emulates;                         // the kind this stands in for
  ProfileId profile;
  Provenance provenance = Provenance::Simulated;  // always: results must say "simulated"
  std::string label() const;                   // "sim:1 (simulated cuda:1, cuda-like)"
};

// Activates the profile for `kind` with `device_count` devices (the profile's default when -1) and
// returns sim:<index>. Throws std::invalid_argument for cpu or an index outside the device count.
SimulatedDevice sim_device_for(DeviceKind kind, int index, int device_count = -1);

// What the harness calls per case: nullopt when the host has the real device (it takes precedence)
// or does not have the kind at all; otherwise sim_device_for(kind, index, host.count(kind)).
std::optional<SimulatedDevice> device_for_simulated_kind(DeviceKind kind, int index, const HostProfile& host);

}  // namespace crossdev::sim
