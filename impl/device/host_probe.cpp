// The real probe. Kept in its own file because it is the only part of impl/device that needs
// ATen's context (the rest depends on c10 headers alone, which keeps compile times short).
#include <ATen/Context.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <ATen/detail/XPUHooksInterface.h>

#include "device/host_profile.h"

namespace crossdev {
namespace {

std::vector<DeviceProperties> unnamed_devices(DeviceKind kind, int count) {
  std::vector<DeviceProperties> out;
  for (int i = 0; i < count; ++i) out.push_back(DeviceProperties{std::string(kind_name(kind)) + ":" + std::to_string(i)});
  return out;
}

}  // namespace

HostProfile HostProfile::probe() {
  HostProfile host;
  if (at::hasCUDA()) {
    const int n = at::detail::getCUDAHooks().getNumGPUs();
    host.set(DeviceKind::CUDA, n, Provenance::Real, unnamed_devices(DeviceKind::CUDA, n));
  }
  if (at::hasMPS()) host.set(DeviceKind::MPS, 1, Provenance::Real, unnamed_devices(DeviceKind::MPS, 1));
  if (at::hasXPU()) {
    const int n = at::detail::getXPUHooks().getNumGPUs();
    host.set(DeviceKind::XPU, n, Provenance::Real, unnamed_devices(DeviceKind::XPU, n));
  }
  if (at::hasXLA()) host.set(DeviceKind::XLA, 1, Provenance::Real, unnamed_devices(DeviceKind::XLA, 1));
  host.source_ = "probe";
  return host;
}

}  // namespace crossdev
