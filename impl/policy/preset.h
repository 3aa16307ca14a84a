#pragma once
// Accelerator preference orders as data. Each preset reproduces one tool's choice so that users
// migrating from it get the same device. Adding a preset: one Preset and its entry in kPresets
// (preset.cpp), plus rows in matrices/redirect_presets.yaml proving it; names, error lists, the CLI,
// the Python module and the tests read the table.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <c10/macros/Macros.h>

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
std::string preset_names();               // "torchdevice, cuda-first, hf-accelerate, lightning[, registered]"
// The built-in rows, then those registered, in registration order.
std::vector<const Preset*> all_presets();

// A preset from outside the table, e.g. a user's device picker as data, from a library that
// `crossdev run --load-library` loads: CROSSDEV_REGISTER_PRESET(kMyPreset) at namespace scope, with
// `kMyPreset` a Preset of static storage duration (the registry keeps a pointer, like c10's
// registries). Throws std::invalid_argument for an empty or taken name or an invalid order.
void register_preset(const Preset& preset);

// Registers at load time; a refused preset is recorded (util/load_library.h), so the library that
// brought it fails to load with the reason (exit 2), instead of an exception escaping a static
// initializer.
struct PresetRegistrar {
  explicit PresetRegistrar(const Preset& preset) noexcept;
};

}  // namespace crossdev

#define CROSSDEV_REGISTER_PRESET(preset) \
  static ::crossdev::PresetRegistrar C10_ANONYMOUS_VARIABLE(crossdev_preset_registrar)(preset)
