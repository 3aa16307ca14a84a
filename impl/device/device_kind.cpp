#include "device/device_kind.h"

#include "util/named_table.h"

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

static_assert(named::in_enum_order(kKinds, &DeviceKindInfo::kind), "kKinds rows must follow DeviceKind's order");
static_assert(named::names_unique(kKinds) && named::names_unique(kAliases), "device kind names must be unique");

}  // namespace

const DeviceKindInfo& kind_info(DeviceKind kind) noexcept { return kKinds[kind_slot(kind)]; }
const char* kind_name(DeviceKind kind) noexcept { return kKinds[kind_slot(kind)].name; }

std::optional<DeviceKind> kind_from_name(std::string_view name) noexcept {
  if (const auto* info = named::find(kKinds, name)) return info->kind;
  if (const auto* alias = named::find(kAliases, name)) return alias->kind;
  return std::nullopt;
}

std::optional<DeviceKind> kind_from_c10(c10::DeviceType type) noexcept {
  for (const auto& info : kKinds)
    if (info.c10_type == type) return info.kind;
  return std::nullopt;
}

const std::string& valid_kind_list() {
  // "xla (alias: tpu)": each alias follows the kind it names.
  static const std::string list = [] {
    std::string out;
    for (const auto& info : kKinds) {
      if (!out.empty()) out += ", ";
      out += info.name;
      for (const auto& alias : kAliases)
        if (alias.kind == info.kind) out += std::string(" (alias: ") + alias.name + ")";
    }
    return out;
  }();
  return list;
}

}  // namespace crossdev
