#include "device/device_kind.h"

namespace crossdev {
namespace {

constexpr std::array<DeviceKindInfo, kNumDeviceKinds> kKinds = {{
    {DeviceKind::CPU, "cpu", c10::DeviceType::CPU, false, true, "cpu"},
    {DeviceKind::CUDA, "cuda", c10::DeviceType::CUDA, true, false, "cuda"},
    {DeviceKind::MPS, "mps", c10::DeviceType::MPS, true, true, "mps"},
    {DeviceKind::XPU, "xpu", c10::DeviceType::XPU, true, false, "xpu"},
    {DeviceKind::XLA, "xla", c10::DeviceType::XLA, true, false, "xla"},
}};

struct Alias {
  const char* name;
  DeviceKind kind;
};
// PyTorch/XLA wants "xla"; users (and PantheraML, seed 001) write "tpu".
constexpr std::array<Alias, 1> kAliases = {{{"tpu", DeviceKind::XLA}}};

}  // namespace

const DeviceKindInfo& kind_info(DeviceKind kind) noexcept { return kKinds[kind_slot(kind)]; }
const char* kind_name(DeviceKind kind) noexcept { return kKinds[kind_slot(kind)].name; }

std::optional<DeviceKind> kind_from_name(std::string_view name) noexcept {
  for (const auto& info : kKinds)
    if (name == info.name) return info.kind;
  for (const auto& alias : kAliases)
    if (name == alias.name) return alias.kind;
  return std::nullopt;
}

std::optional<DeviceKind> kind_from_c10(c10::DeviceType type) noexcept {
  for (const auto& info : kKinds)
    if (info.c10_type == type) return info.kind;
  return std::nullopt;
}

const char* valid_kind_list() noexcept { return "cpu, cuda, mps, xpu, xla (alias: tpu)"; }

}  // namespace crossdev
