#include "manager/checkpoint.h"

#include <fstream>
#include <iterator>
#include <stdexcept>

#include <ATen/core/Dict.h>
#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include "manager/op_log.h"
#include "util/atomic_file.h"

namespace crossdev::manager {
namespace {

constexpr const char* kFormat = "crossdev-checkpoint/1";

std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open checkpoint '" + path + "'");
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

MapLocation MapLocation::parse(const std::string& text) {
  MapLocation m;
  if (text == "policy") return m;
  if (text == "cpu") {
    m.mode = Mode::Cpu;
    return m;
  }
  m.mode = Mode::Device;
  m.device = parse_device(text);  // DeviceSpecError names the input
  return m;
}

std::string MapLocation::str() const {
  switch (mode) {
    case Mode::Policy: return "policy";
    case Mode::Cpu: return "cpu";
    case Mode::Device: break;
  }
  return device.str();
}

void save_checkpoint(const std::string& path, const std::vector<CheckpointTensor>& tensors) {
  ScopedOp op("checkpoint", "save", path);
  c10::Dict<std::string, at::Tensor> data;
  c10::Dict<std::string, std::string> devices;
  for (const auto& t : tensors) {
    if (data.contains(t.name)) throw std::invalid_argument("save_checkpoint: duplicate tensor name '" + t.name + "'");
    data.insert(t.name, t.value.tensor.detach().to(c10::Device(c10::DeviceType::CPU)).contiguous());
    devices.insert(t.name, canonical_device(t.value.device).str());
  }
  c10::impl::GenericDict root(c10::StringType::get(), c10::AnyType::get());
  root.insert("format", std::string(kFormat));
  root.insert("tensors", data);
  root.insert("devices", devices);
  const std::vector<char> bytes = torch::jit::pickle_save(c10::IValue(root));
  write_file_atomically(path, std::string_view(bytes.data(), bytes.size()));
  op.field("tensors", std::to_string(tensors.size()));
}

std::vector<LoadedTensor> load_checkpoint(DeviceManager& manager, const std::string& path, const MapLocation& map_location) {
  ScopedOp op("checkpoint", "load", path);
  op.field("map_location", map_location.str());
  const c10::IValue root = torch::jit::pickle_load(read_bytes(path));
  if (!root.isGenericDict()) throw std::runtime_error("checkpoint '" + path + "': not a crossdev checkpoint (top level is not a dict)");
  const auto dict = root.toGenericDict();
  if (!dict.contains("format") || !dict.at("format").isString() || dict.at("format").toStringRef() != kFormat)
    throw std::runtime_error("checkpoint '" + path + "': missing format '" + kFormat + "'");
  const auto tensors = dict.at("tensors").toGenericDict();
  const auto devices = dict.at("devices").toGenericDict();

  std::vector<LoadedTensor> out;
  for (const auto& item : tensors) {
    LoadedTensor t;
    t.name = item.key().toStringRef();
    t.saved_device = devices.contains(t.name) ? parse_device(devices.at(t.name).toStringRef()) : DeviceSpec::of(DeviceKind::CPU);
    DeviceSpec target;
    switch (map_location.mode) {
      case MapLocation::Mode::Cpu:
        target = DeviceSpec::of(DeviceKind::CPU);
        t.placement_reason = "map_location=cpu";
        break;
      case MapLocation::Mode::Device:
        target = map_location.device;
        t.placement_reason = "map_location=" + map_location.device.str();
        break;
      case MapLocation::Mode::Policy: {
        const Decision d = manager.resolve(&t.saved_device, Via::To);
        target = d.resolved;
        t.placement_reason = "saved on " + t.saved_device.str() + "; policy: " + d.describe();
        break;
      }
    }
    std::vector<Placed> one{{item.value().toTensor(), DeviceSpec::of(DeviceKind::CPU)}};
    move_to(manager, one, target, t.placement_reason);
    t.casts = ensure_dtype(manager, one);
    t.value = one.front();
    out.push_back(std::move(t));
  }
  op.field("tensors", std::to_string(out.size()));
  return out;
}

}  // namespace crossdev::manager
