#pragma once
// A unified Stream / Event API (seed 002: "unified stream interface", "consistent event
// API"). On devices whose LibTorch backend has streams (real CUDA, XPU, MPS) these wrap
// c10::Stream / c10::Event, so the semantics are the backend's own. Everywhere else
// (cpu, simulated kinds) they are emulated with host timing under CUDA's rules:
//   - an event that was never recorded: query() is true, synchronize() returns at once;
//   - elapsed_time() needs both events created with enable_timing=true, then both recorded,
//     then both complete — with c10's exact error texts, in that order;
//   - host execution is synchronous, so an emulated stream is always idle (query() true)
//     and a recorded emulated event is complete at once.
#include <chrono>
#include <optional>
#include <string>

#include <c10/core/Event.h>
#include <c10/core/Stream.h>

#include "manager/device_manager.h"

namespace crossdev::manager {

class Event;

class Stream {
 public:
  // A stream of `device` (a fresh one from the backend's pool when native).
  Stream(DeviceManager& manager, const DeviceSpec& device);
  const DeviceSpec& device() const noexcept { return device_; }
  bool emulated() const noexcept { return !native_; }
  bool query() const;
  void synchronize() const;
  void wait_event(const Event& event) const;
  void wait_stream(const Stream& other) const;
  const std::optional<c10::Stream>& native() const noexcept { return native_; }

 private:
  DeviceSpec device_;
  std::optional<c10::Stream> native_;
};

class Event {
 public:
  Event(DeviceManager& manager, const DeviceSpec& device, bool enable_timing = false);
  const DeviceSpec& device() const noexcept { return device_; }
  bool emulated() const noexcept { return !native_; }
  bool enable_timing() const noexcept { return timing_; }
  bool recorded() const noexcept { return recorded_; }

  void record(const Stream& stream);
  bool query() const;
  void synchronize() const;
  void block(const Stream& stream) const;  // make `stream` wait for this event
  double elapsed_time(const Event& end) const;  // milliseconds

 private:
  DeviceSpec device_;
  bool timing_;
  bool recorded_ = false;
  std::optional<c10::Event> native_;
  std::chrono::steady_clock::time_point recorded_at_{};
};

}  // namespace crossdev::manager
