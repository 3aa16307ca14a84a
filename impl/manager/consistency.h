#pragma once
// ensure_device / ensure_dtype (seed 003's ensure_device_consistency / ensure_dtype_consistency):
// bring a set of tensors onto one device under the redirect policy, and onto dtypes the
// device supports. Every move and every cast is returned as a record with its reason and
// written to the op log; nothing is cast silently.
//
// A Placed tensor pairs the data with the device the program believes it is on. On a real
// device they agree; on a simulated one the data stays on the CPU (DeviceManager::storage_device)
// and only the label moves, and every record says simulated.
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "manager/device_manager.h"

namespace crossdev::manager {

struct Placed {
  at::Tensor tensor;
  DeviceSpec device;
};
// Labels each tensor with its own device (real tensors).
std::vector<Placed> place_as_is(const std::vector<at::Tensor>& tensors);
// Puts each tensor on `devices[i]` through the manager (data to storage_device, label to the device).
std::vector<Placed> place_on(DeviceManager& manager, const std::vector<at::Tensor>& tensors,
                             const std::vector<DeviceSpec>& devices);
std::vector<at::Tensor> tensors_of(const std::vector<Placed>& placed);
bool same_device(const std::vector<Placed>& placed);

struct MoveRecord {
  std::size_t index;
  DeviceSpec from, to;
  std::string reason;
  bool simulated;
};

struct CastRecord {
  std::size_t index;
  c10::ScalarType from, to;
  std::string reason;
};

struct DeviceConsistency {
  DeviceSpec target;
  Decision decision;  // how the policy resolved the target
  std::vector<MoveRecord> moves;
};

// target == nullptr: the common device is the input device the policy's preset ranks first
// (accelerators in preset order, then cpu), resolved through the redirect policy like `.to()`.
DeviceConsistency ensure_device(DeviceManager& manager, std::vector<Placed>& tensors, const DeviceSpec* target = nullptr);

// Moves every tensor to exactly `device`, bypassing the redirect policy (used by device chain steps,
// whose target the device chain already chose). Each move is recorded with `reason`.
std::vector<MoveRecord> move_to(DeviceManager& manager, std::vector<Placed>& tensors, const DeviceSpec& device,
                                const std::string& reason);

struct DtypeOptions {
  bool unify = false;  // also promote all floating/complex inputs to one dtype (torch.result_type)
  std::optional<c10::ScalarType> target;  // cast every floating input to this dtype (then substitute)
  // Substitute for what THIS device cannot hold (the device a call is about to run on), rather
  // than for each tensor's own device.
  std::optional<DeviceSpec> device;
};
// Casts each tensor whose dtype its device cannot hold to the backend's replacement
// (float64 -> float32 on MPS), after the optional unify/target step.
std::vector<CastRecord> ensure_dtype(DeviceManager& manager, std::vector<Placed>& tensors, const DtypeOptions& options = {});

}  // namespace crossdev::manager
