#include "manager/consistency.h"

#include "manager/op_log.h"

namespace crossdev::manager {
namespace {

int preset_rank(const Preset& preset, DeviceKind kind) {
  for (std::uint8_t i = 0; i < preset.order_len; ++i)
    if (preset.order[i] == kind) return i;
  return kind == DeviceKind::CPU ? 100 : 50;  // accelerators outside the preset before cpu
}

void cast_one(std::vector<Placed>& tensors, std::size_t i, c10::ScalarType to, std::string reason,
              std::vector<CastRecord>& out) {
  Placed& p = tensors[i];
  const c10::ScalarType from = p.tensor.scalar_type();
  if (from == to) return;
  ScopedOp op("cast", "ensure_dtype", p.device.str());
  op.field("from", dtype_name(from));
  op.field("to", dtype_name(to));
  op.field("reason", reason);
  p.tensor = p.tensor.to(to);
  out.push_back({i, from, to, std::move(reason)});
}

}  // namespace

std::vector<Placed> place_as_is(const std::vector<at::Tensor>& tensors) {
  std::vector<Placed> out;
  for (const auto& t : tensors) out.push_back({t, DeviceSpec::from_c10(t.device())});
  return out;
}

std::vector<Placed> place_on(DeviceManager& manager, const std::vector<at::Tensor>& tensors,
                             const std::vector<DeviceSpec>& devices) {
  if (devices.size() != tensors.size())
    throw std::invalid_argument("place_on: " + std::to_string(tensors.size()) + " tensors but " +
                                std::to_string(devices.size()) + " devices");
  std::vector<Placed> out;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const DeviceSpec d = canonical_device(devices[i]);
    out.push_back({tensors[i].to(manager.storage_device(d)), d});
  }
  return out;
}

std::vector<at::Tensor> tensors_of(const std::vector<Placed>& placed) {
  std::vector<at::Tensor> out;
  for (const auto& p : placed) out.push_back(p.tensor);
  return out;
}

bool same_device(const std::vector<Placed>& placed) {
  for (const auto& p : placed)
    if (!p.device.same_device(placed.front().device)) return false;
  return true;
}

DeviceConsistency ensure_device(DeviceManager& manager, std::vector<Placed>& tensors, const DeviceSpec* target) {
  DeviceConsistency result;
  DeviceSpec request;
  std::string why;
  if (target) {
    request = *target;
    why = "requested target " + target->str();
  } else {
    if (tensors.empty()) throw std::invalid_argument("ensure_device: no tensors and no target device");
    const Preset& preset = manager.config().policy ? *manager.config().policy : default_preset();
    request = tensors.front().device;
    for (const auto& p : tensors)
      if (preset_rank(preset, p.device.kind) < preset_rank(preset, request.kind)) request = p.device;
    why = std::string("common device: the input device ranked first by preset ") + preset.name;
  }
  result.decision = manager.resolve(&request, Via::To);
  result.target = canonical_device(result.decision.resolved);
  result.moves = move_to(manager, tensors, result.target, why + "; policy: " + result.decision.describe());
  return result;
}

std::vector<MoveRecord> move_to(DeviceManager& manager, std::vector<Placed>& tensors, const DeviceSpec& device,
                                const std::string& reason) {
  const DeviceSpec target = canonical_device(device);
  const c10::Device storage = manager.storage_device(target);
  std::vector<MoveRecord> moves;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    Placed& p = tensors[i];
    if (p.device.same_device(target)) continue;
    const bool simulated = manager.is_simulated(target) || manager.is_simulated(p.device);
    ScopedOp op("move", "move", target.str());
    op.field("from", p.device.str());
    op.field("to", target.str());
    op.field("reason", reason);
    op.field("simulated", simulated ? "true" : "false");
    p.tensor = p.tensor.to(storage);
    moves.push_back({i, p.device, target, reason, simulated});
    p.device = target;
  }
  return moves;
}

std::vector<CastRecord> ensure_dtype(DeviceManager& manager, std::vector<Placed>& tensors, const DtypeOptions& options) {
  std::vector<CastRecord> casts;
  if (options.target) {
    for (std::size_t i = 0; i < tensors.size(); ++i)
      if (tensors[i].tensor.is_floating_point() || tensors[i].tensor.is_complex())
        cast_one(tensors, i, *options.target, std::string("requested dtype ") + dtype_name(*options.target), casts);
  } else if (options.unify && !tensors.empty()) {
    c10::ScalarType common = tensors.front().tensor.scalar_type();
    for (const auto& p : tensors) common = c10::promoteTypes(common, p.tensor.scalar_type());
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      // Promote straight to what the device can hold: float64 on MPS means float32, in one cast.
      c10::ScalarType target = common;
      std::string reason = std::string("promote to the common dtype ") + dtype_name(common) + " (torch.promote_types)";
      for (const auto& sub : backend_for(tensors[i].device.kind).traits().unsupported_dtypes)
        if (sub.unsupported == common) {
          target = sub.replacement;
          reason += std::string(", held as ") + dtype_name(target) + " on " + kind_name(tensors[i].device.kind) + ": " + sub.reason;
        }
      cast_one(tensors, i, target, reason, casts);
    }
  }
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const DeviceKind kind = options.device ? options.device->kind : tensors[i].device.kind;
    for (const auto& sub : backend_for(kind).traits().unsupported_dtypes)
      if (tensors[i].tensor.scalar_type() == sub.unsupported)
        cast_one(tensors, i, sub.replacement,
                 std::string(kind_name(kind)) + " cannot hold " + dtype_name(sub.unsupported) + ": " + sub.reason, casts);
  }
  return casts;
}

}  // namespace crossdev::manager
