#include "sim/sim_hooks.h"

#include <algorithm>
#include <cstring>

#include <c10/core/CPUAllocator.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/Exception.h>

#include "sim/sim_allocator.h"
#include "sim/sim_generator.h"
#include "sim/sim_guard.h"

namespace crossdev::sim {

c10::DeviceIndex SimHooks::deviceCount() const { return static_cast<c10::DeviceIndex>(device_count()); }
void SimHooks::setCurrentDevice(c10::DeviceIndex device) const { set_current_device(device); }
c10::DeviceIndex SimHooks::getCurrentDevice() const { return static_cast<c10::DeviceIndex>(current_device()); }
c10::DeviceIndex SimHooks::exchangeDevice(c10::DeviceIndex device) const {
  return static_cast<c10::DeviceIndex>(exchange_device(device));
}
c10::DeviceIndex SimHooks::maybeExchangeDevice(c10::DeviceIndex device) const {
  if (device < 0 || device >= device_count()) return getCurrentDevice();
  return exchangeDevice(device);
}

const at::Generator& SimHooks::getDefaultGenerator(c10::DeviceIndex device_index) const {
  return default_generator(device_index);
}
at::Generator SimHooks::getNewGenerator(c10::DeviceIndex device_index) const { return new_generator(device_index); }

at::Device SimHooks::getDeviceFromPtr(void* data) const {
  const auto device = SimAllocator::instance().device_of(data);
  TORCH_CHECK(device.has_value(), "sim: pointer ", data, " is not the start of a live sim allocation");
  return at::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(*device));
}

at::Allocator* SimHooks::getPinnedMemoryAllocator() const { return c10::GetCPUAllocator(); }

void SimHooks::resizePrivateUse1Bytes(const c10::Storage& storage, size_t new_bytes) const {
  c10::StorageImpl* impl = storage.unsafeGetStorageImpl();
  TORCH_CHECK(impl->resizable(), "Trying to resize storage that is not resizable");
  const c10::DeviceGuard guard(impl->device());
  c10::DataPtr fresh = impl->allocator()->allocate(new_bytes);
  const size_t keep = std::min(new_bytes, impl->nbytes());
  if (keep > 0) std::memcpy(fresh.get(), impl->data(), keep);
  impl->set_data_ptr_noswap(std::move(fresh));
  impl->set_nbytes(new_bytes);
}

}  // namespace crossdev::sim
