#pragma once
// Device selection for the sim device: a thread-local current index (like cudaSetDevice) and the
// c10::impl::DeviceGuardImplInterface that c10::DeviceGuard uses for PrivateUse1. The device count
// comes from the active profile; an out-of-range index raises that profile's verbatim text.
#include <c10/core/impl/DeviceGuardImplInterface.h>

namespace crossdev::sim {

int device_count() noexcept;
int current_device() noexcept;
void set_current_device(int index);       // throws the profile's invalid-index error
int exchange_device(int index);           // returns the previous index
void check_device_index(int index);       // throws the profile's invalid-index error

class SimGuardImpl final : public c10::impl::DeviceGuardImplInterface {
 public:
  static constexpr c10::DeviceType static_type = c10::DeviceType::PrivateUse1;

  c10::DeviceType type() const override { return static_type; }
  c10::Device exchangeDevice(c10::Device d) const override;
  c10::Device getDevice() const override;
  void setDevice(c10::Device d) const override;
  void uncheckedSetDevice(c10::Device d) const noexcept override;
  // One default stream per device: the sim device executes synchronously on the host.
  c10::Stream getStream(c10::Device d) const override;
  c10::Stream getDefaultStream(c10::Device d) const override;
  c10::Stream exchangeStream(c10::Stream s) const override;
  c10::DeviceIndex deviceCount() const noexcept override;
  void synchronizeDevice(c10::DeviceIndex) const override {}
  bool queryStream(const c10::Stream&) const override { return true; }
  void synchronizeStream(const c10::Stream&) const override {}
  // Events: work is complete when it returns, so recording is a no-op and queries are always true.
  void record(void** event, const c10::Stream&, const c10::DeviceIndex, const c10::EventFlag) const override {
    *event = nullptr;
  }
  void block(void*, const c10::Stream&) const override {}
  bool queryEvent(void*) const override { return true; }
  void destroyEvent(void*, const c10::DeviceIndex) const noexcept override {}
  void synchronizeEvent(void*) const override {}
};

}  // namespace crossdev::sim
