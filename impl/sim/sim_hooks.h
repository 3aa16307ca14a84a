#pragma once
// at::PrivateUse1HooksInterface for the sim device: what at::globalContext() and Python
// (torch.Generator(device="sim"), Storage resizing, device queries) ask of a PrivateUse1 backend.
#include <ATen/detail/PrivateUse1HooksInterface.h>

namespace crossdev::sim {

struct SimHooks final : public at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return true; }
  bool hasPrimaryContext(c10::DeviceIndex) const override { return true; }  // nothing to initialise
  c10::DeviceIndex deviceCount() const override;
  void setCurrentDevice(c10::DeviceIndex device) const override;
  c10::DeviceIndex getCurrentDevice() const override;
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex device) const override;
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex device) const override;
  const at::Generator& getDefaultGenerator(c10::DeviceIndex device_index) const override;
  at::Generator getNewGenerator(c10::DeviceIndex device_index = -1) const override;
  at::Device getDeviceFromPtr(void* data) const override;
  bool isPinnedPtr(const void*) const override { return false; }
  // sim has no pinned memory: a "pinned" host buffer (`to("cpu", non_blocking=True)` asks for one,
  // as does `pin_memory=True`) is ordinary CPU memory, and isPinnedPtr stays false.
  at::Allocator* getPinnedMemoryAllocator() const override;
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t new_bytes) const override;
};

}  // namespace crossdev::sim
