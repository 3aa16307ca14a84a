#pragma once
// Accelerator preference orders as data. Each preset reproduces one tool's choice so that users
// migrating from it get the same device. Adding a preset: one Preset and its entry in kPresets
// (preset.cpp), plus rows in matrices/redirect_presets.yaml proving it; names, error lists, the CLI,
// the Python module and the tests read the table.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "device/device_kind.h"

namespace crossdev {

struct Preset {
  const char* name;
  const char* source;                   // where the order comes from
  // Accelerators, most preferred first (the first order_len entries); CPU is always last. Room
  // for every kind, so adding a device kind never resizes a preset.
  std::array<DeviceKind, kNumDeviceKinds> order;
  std::uint8_t order_len;
  bool redirects_by_default;            // rewrite explicit requests without TORCH_ALLOW_REDIRECTS=true
  bool redirect_present_to_preferred;   // a present, non-preferred accelerator is redirected (seed 002's
                                        // "a CUDA request may be redirected to MPS" when MPS is preferred)
};

const Preset* find_preset(std::string_view name) noexcept;
const Preset& default_preset() noexcept;  // torchdevice
std::string preset_names();               // "torchdevice, cuda-first, hf-accelerate, lightning"
const Preset* const* all_presets(std::size_t* count) noexcept;

}  // namespace crossdev
