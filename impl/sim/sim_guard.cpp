#include "sim/sim_guard.h"

#include <c10/util/Exception.h>

#include "sim/sim_config.h"

namespace crossdev::sim {
namespace {

thread_local int t_current_device = 0;

c10::Device sim_device(int index) { return c10::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(index)); }

}  // namespace

int device_count() noexcept { return current_config()->device_count; }

int current_device() noexcept {
  // A profile switch may have shrunk the device count under this thread.
  return t_current_device < device_count() ? t_current_device : 0;
}

void check_device_index(int index) {
  const int count = device_count();
  TORCH_CHECK(index >= 0 && index < count, current_profile().invalid_index_message(index, count));
}

void set_current_device(int index) {
  check_device_index(index);
  t_current_device = index;
}

int exchange_device(int index) {
  const int previous = current_device();
  if (index != previous) set_current_device(index);
  return previous;
}

c10::Device SimGuardImpl::exchangeDevice(c10::Device d) const {
  TORCH_CHECK(d.is_privateuseone(), "sim: expected a sim (PrivateUse1) device, but got ", d);
  return sim_device(exchange_device(d.index()));
}

c10::Device SimGuardImpl::getDevice() const { return sim_device(current_device()); }

void SimGuardImpl::setDevice(c10::Device d) const {
  TORCH_CHECK(d.is_privateuseone(), "sim: expected a sim (PrivateUse1) device, but got ", d);
  set_current_device(d.index());
}

void SimGuardImpl::uncheckedSetDevice(c10::Device d) const noexcept {
  if (d.index() >= 0) t_current_device = d.index();
}

c10::Stream SimGuardImpl::getStream(c10::Device d) const { return c10::Stream(c10::Stream::DEFAULT, d); }
c10::Stream SimGuardImpl::getDefaultStream(c10::Device d) const { return c10::Stream(c10::Stream::DEFAULT, d); }
c10::Stream SimGuardImpl::exchangeStream(c10::Stream s) const { return c10::Stream(c10::Stream::DEFAULT, s.device()); }

c10::DeviceIndex SimGuardImpl::deviceCount() const noexcept { return static_cast<c10::DeviceIndex>(device_count()); }

}  // namespace crossdev::sim
