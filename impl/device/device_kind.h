#pragma once
// The device kinds crossdev knows, as one table (modelled on c10's DeviceType name table).
// Adding a kind: add an enumerator and a row in device_kind.cpp; everything else reads the table.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <c10/core/DeviceType.h>

namespace crossdev {

enum class DeviceKind : std::uint8_t { CPU = 0, CUDA, MPS, XPU, XLA };
inline constexpr int kNumDeviceKinds = static_cast<int>(DeviceKind::XLA) + 1;  // the last enumerator + 1
// Every kind in enum order (device_kind.cpp static_asserts that its table has one row per kind).
inline constexpr std::array<DeviceKind, kNumDeviceKinds> kAllDeviceKinds = [] {
  std::array<DeviceKind, kNumDeviceKinds> all{};
  for (int i = 0; i < kNumDeviceKinds; ++i) all[static_cast<std::size_t>(i)] = static_cast<DeviceKind>(i);
  return all;
}();

struct DeviceKindInfo {
  DeviceKind kind;
  const char* name;             // canonical spelling, as torch.device prints it
  c10::DeviceType c10_type;
  bool is_accelerator;
  bool single_device;           // index fixed at 0 (cpu, mps): None and 0 are the same device
  const char* autocast_type;    // device_type for torch.autocast (seed 001: tpu -> xla)
};

const DeviceKindInfo& kind_info(DeviceKind kind) noexcept;
const char* kind_name(DeviceKind kind) noexcept;

// Canonical names and aliases ("tpu" -> xla, seed 001). Case-sensitive, like torch.device.
std::optional<DeviceKind> kind_from_name(std::string_view name) noexcept;
std::optional<DeviceKind> kind_from_c10(c10::DeviceType type) noexcept;

// "cpu, cuda, mps, xpu, xla (alias: tpu)" for error messages, built from the table.
const std::string& valid_kind_list();

inline constexpr int kind_slot(DeviceKind kind) noexcept { return static_cast<int>(kind); }

}  // namespace crossdev
