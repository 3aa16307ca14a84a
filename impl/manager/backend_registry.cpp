#include "manager/backend_registry.h"

#include <array>
#include <atomic>
#include <stdexcept>
#include <string>

namespace crossdev::manager {
namespace {

// Constant-initialized (all null) before any registrar runs, whatever the static-init order.
std::array<std::atomic<DeviceBackend*>, kNumDeviceKinds> g_backends{};

}  // namespace

DeviceBackend& backend_for(DeviceKind kind) {
  DeviceBackend* backend = g_backends[kind_slot(kind)].load(std::memory_order_acquire);
  if (!backend) throw std::logic_error(std::string("no backend registered for device kind ") + kind_name(kind));
  return *backend;
}

DeviceBackend* register_backend(DeviceBackend& backend) noexcept {
  return g_backends[kind_slot(backend.kind())].exchange(&backend, std::memory_order_acq_rel);
}

}  // namespace crossdev::manager
