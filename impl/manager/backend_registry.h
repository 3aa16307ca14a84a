#pragma once
// The backend table: one slot per DeviceKind, filled from the built-in rows on first use.
// register_backend() replaces a slot (e.g. the sim PrivateUse1 backend taking over a kind in
// tests), mirroring c10::impl::DeviceGuardImplRegistrar.
#include "manager/backend.h"

namespace crossdev::manager {

DeviceBackend& backend_for(DeviceKind kind);
// Returns the previous backend so a test can restore it.
std::unique_ptr<DeviceBackend> register_backend(std::unique_ptr<DeviceBackend> backend);

}  // namespace crossdev::manager
