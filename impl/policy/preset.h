#pragma once
// Accelerator preference orders as data. Each preset reproduces one tool's choice so that users
// migrating from it get the same device. Adding a preset: one row in preset.cpp.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "device/device_kind.h"

namespace crossdev {

struct Preset {
  const char* name;
  const char* source;                   // where the order comes from
  std::array<DeviceKind, 4> order;      // accelerators, most preferred first; CPU is always last
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
