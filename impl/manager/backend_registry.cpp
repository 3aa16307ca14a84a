#include "manager/backend_registry.h"

#include <array>
#include <mutex>
#include <stdexcept>

#include "manager/backends/backends.h"

namespace crossdev::manager {
namespace {

struct BuiltinBackend {
  DeviceKind kind;
  BackendFactory make;
};
// Adding a device kind: one row here plus its backends/<kind>_backend.cpp.
constexpr std::array<BuiltinBackend, kNumDeviceKinds> kBuiltinBackends = {{
    {DeviceKind::CPU, make_cpu_backend},
    {DeviceKind::CUDA, make_cuda_backend},
    {DeviceKind::MPS, make_mps_backend},
    {DeviceKind::XPU, make_xpu_backend},
    {DeviceKind::XLA, make_xla_backend},
}};

struct Registry {
  std::mutex mutex;
  std::array<std::unique_ptr<DeviceBackend>, kNumDeviceKinds> slots;
  Registry() {
    for (const auto& row : kBuiltinBackends) slots[kind_slot(row.kind)] = row.make();
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

DeviceBackend& backend_for(DeviceKind kind) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  DeviceBackend* backend = r.slots[kind_slot(kind)].get();
  if (!backend) throw std::logic_error(std::string("no backend registered for device kind ") + kind_name(kind));
  return *backend;
}

std::unique_ptr<DeviceBackend> register_backend(std::unique_ptr<DeviceBackend> backend) {
  if (!backend) throw std::invalid_argument("register_backend: null backend");
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto& slot = r.slots[kind_slot(backend->kind())];
  std::swap(slot, backend);
  return backend;
}

}  // namespace crossdev::manager
