#pragma once
// One backend per device kind behind the single DeviceManager API, as c10 keeps one
// DeviceGuardImplInterface per DeviceType. A backend answers for REAL devices of its kind;
// devices a host profile only simulates are answered by simulated_device.h, never by a
// backend, so a simulated answer can never be mistaken for a measured one.
//
// Adding a device kind: a DeviceKind row (impl/device/device_kind.cpp) and one
// backends/<kind>_backend.cpp implementing this interface and registering it with
// CROSSDEV_REGISTER_BACKEND (backend_registry.h).
#include <memory>

#include "manager/capabilities.h"
#include "device/device_kind.h"
#include "manager/device_info.h"

namespace crossdev::manager {

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  virtual DeviceKind kind() const noexcept = 0;
  virtual const BackendTraits& traits() const noexcept = 0;

  // Real devices only. `index` is the effective device index.
  virtual MemoryStats memory_stats(int index) const = 0;
  virtual EmptyCacheResult empty_cache(int index) = 0;
  virtual UnifiedProperties properties(int index) const = 0;
  // Whether real streams/events exist (c10::Stream / c10::Event through the kind's
  // DeviceGuardImpl); otherwise the unified API emulates them with host timing.
  virtual bool has_native_streams() const noexcept { return false; }
  // The preferred low-precision dtype given a device's properties (real or masquerade).
  virtual c10::ScalarType low_precision_for(const UnifiedProperties&) const { return traits().low_precision; }
};

}  // namespace crossdev::manager
