#pragma once
// The backend table: one slot per DeviceKind, non-owning, like c10's device_guard_impl_registry.
// Each backends/<kind>_backend.cpp registers its backend when the library loads,
//
//   CROSSDEV_REGISTER_BACKEND(new CpuBackend());
//
// (c10's C10_REGISTER_GUARD_IMPL): the object is created once and never freed, so the reference
// backend_for() returns stays valid for the life of the process, with no lock held.
#include <c10/macros/Macros.h>

#include "manager/backend.h"

namespace crossdev::manager {

// Throws std::logic_error when no backend of `kind` is registered.
DeviceBackend& backend_for(DeviceKind kind);

// Puts `backend` in its kind's slot and returns the previous occupant (nullptr if none). The
// registry does not own it: whoever registers a shorter-lived backend (a test substituting a
// counting one) puts the previous one back before destroying its own.
DeviceBackend* register_backend(DeviceBackend& backend) noexcept;

struct BackendRegistrar {
  explicit BackendRegistrar(DeviceBackend* backend) noexcept { register_backend(*backend); }
};

}  // namespace crossdev::manager

#define CROSSDEV_REGISTER_BACKEND(...) \
  static ::crossdev::manager::BackendRegistrar C10_ANONYMOUS_VARIABLE(crossdev_backend_registrar)(__VA_ARGS__)
