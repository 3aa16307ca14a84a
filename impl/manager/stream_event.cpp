#include "manager/stream_event.h"

#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>

#include "manager/op_log.h"

namespace crossdev::manager {
namespace {

bool native_for(DeviceManager& manager, const DeviceSpec& device) {
  manager.require_present(device);
  return !manager.is_simulated(device) && device.kind != DeviceKind::CPU && backend_for(device.kind).has_native_streams() &&
         c10::impl::hasDeviceGuardImpl(kind_info(device.kind).c10_type);
}



}  // namespace

Stream::Stream(DeviceManager& manager, const DeviceSpec& device) : device_(canonical_device(device)) {
  ScopedOp op("stream", "create", device_.str());
  if (native_for(manager, device_)) {
    const c10::Device d = manager.storage_device(device_);
    native_ = c10::impl::getDeviceGuardImpl(d.type())->getStreamFromGlobalPool(d, /*isHighPriority=*/false);
    op.field("kind", "native");
  } else {
    op.field("kind", "emulated");
  }
}

bool Stream::query() const { return native_ ? native_->query() : true; }

void Stream::synchronize() const {
  ScopedOp op("stream", "synchronize", device_.str());
  if (native_) native_->synchronize();
}

void Stream::wait_event(const Event& event) const {
  ScopedOp op("stream", "wait_event", device_.str());
  if (native_ && !event.emulated()) {
    event.block(*this);  // device-side wait, as torch.cuda.Stream.wait_event
    return;
  }
  // Emulated: host order already puts everything recorded before this call ahead of it.
  event.synchronize();
}

void Stream::wait_stream(const Stream& other) const {
  ScopedOp op("stream", "wait_stream", device_.str());
  other.synchronize();
}

Event::Event(DeviceManager& manager, const DeviceSpec& device, bool enable_timing)
    : device_(canonical_device(device)), timing_(enable_timing) {
  if (native_for(manager, device_))
    native_.emplace(kind_info(device_.kind).c10_type,
                    enable_timing ? c10::EventFlag::BACKEND_DEFAULT : c10::EventFlag::PYTORCH_DEFAULT);
}

void Event::record(const Stream& stream) {
  ScopedOp op("event", "record", device_.str());
  TORCH_CHECK(stream.device().kind == device_.kind, "Event device type ", c10::DeviceTypeName(kind_info(device_.kind).c10_type),
              " does not match recording stream's device type ",
              c10::DeviceTypeName(kind_info(stream.device().kind).c10_type), ".");
  TORCH_CHECK(stream.device().effective_index() == device_.effective_index(), "Event device index ",
              device_.effective_index(), " does not match recording stream's device index ",
              stream.device().effective_index(), ".");
  if (native_ && stream.native()) {
    native_->record(*stream.native());
  } else {
    recorded_at_ = std::chrono::steady_clock::now();
  }
  recorded_ = true;
}

bool Event::query() const {
  if (!recorded_) return true;  // CUDA: an event never recorded counts as complete
  return native_ ? native_->query() : true;
}

void Event::synchronize() const {
  if (!recorded_) return;
  if (native_) native_->synchronize();
}

void Event::block(const Stream& stream) const {
  if (native_ && stream.native()) native_->block(*stream.native());
  else synchronize();
}

double Event::elapsed_time(const Event& end) const {
  ScopedOp op("event", "elapsed_time", device_.str());
  TORCH_CHECK(end.device_.kind == device_.kind, "Event device type ", c10::DeviceTypeName(kind_info(device_.kind).c10_type),
              " does not match other's device type ", c10::DeviceTypeName(kind_info(end.device_.kind).c10_type), ".");
  TORCH_CHECK_VALUE(timing_ && end.timing_, "Both events must be created with argument 'enable_timing=True'.");
  TORCH_CHECK_VALUE(recorded_ && end.recorded_, "Both events must be recorded before calculating elapsed time.");
  TORCH_CHECK(query() && end.query(), "Both events must be completed before calculating elapsed time.");
  if (native_ && end.native_) return native_->elapsedTime(*end.native_);
  return std::chrono::duration<double, std::milli>(end.recorded_at_ - recorded_at_).count();
}

}  // namespace crossdev::manager
