#pragma once
// Checkpoint portability (seed 004: "train on CUDA, generate on MPS or CPU"). A checkpoint is
// written with torch::pickle_save, i.e. torch.save's zip format, as
//   {"format": "crossdev-checkpoint/1", "tensors": {name: tensor}, "devices": {name: "cuda:0"}}
// with tensor data always on the CPU and the device it was saved from kept as a string, so
// Python's torch.load reads it and loading never needs the saving device. On load a
// MapLocation decides where each tensor goes:
//   policy   the saved device, resolved through the redirect policy on this host (seed 002)
//   cpu      the cpu, like torch.load(map_location="cpu")
//   <device> exactly that device
// then dtypes the target cannot hold are cast (logged, e.g. float64 -> float32 on MPS).
#include <string>
#include <vector>

#include "manager/consistency.h"

namespace crossdev::manager {

struct CheckpointTensor {
  std::string name;
  Placed value;
};

void save_checkpoint(const std::string& path, const std::vector<CheckpointTensor>& tensors);

struct MapLocation {
  enum class Mode { Policy, Cpu, Device } mode = Mode::Policy;
  DeviceSpec device;  // Mode::Device only
  static MapLocation parse(const std::string& text);  // "policy" | "cpu" | a device string
  std::string str() const;
};

struct LoadedTensor {
  std::string name;
  Placed value;
  DeviceSpec saved_device;
  std::string placement_reason;
  std::vector<CastRecord> casts;
};

// Errors reading the file are PyTorch's own (e.g. "PytorchStreamReader failed reading zip
// archive: ..."), rethrown unchanged so the classifier sees model_loading texts verbatim.
std::vector<LoadedTensor> load_checkpoint(DeviceManager& manager, const std::string& path, const MapLocation& map_location);

}  // namespace crossdev::manager
