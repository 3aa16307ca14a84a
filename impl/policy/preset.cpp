#include "policy/preset.h"

#include "util/named_table.h"

namespace crossdev {
namespace {

using K = DeviceKind;

constexpr Preset kTorchDevice{
    "torchdevice", "seed 002: TorchDevice redirect policy table (MPS preferred over CUDA)",
    {K::MPS, K::CUDA}, 2, /*redirects_by_default=*/true, /*redirect_present_to_preferred=*/true};

constexpr Preset kCudaFirst{
    "cuda-first", "seed 004: get_device() CUDA > MPS > CPU, extended with XPU and XLA",
    {K::CUDA, K::XPU, K::MPS, K::XLA}, 4, true, false};

// accelerate/state.py: PartialState picks the XLA device when torch_xla is present, then
// default_device checks MPS before CUDA, then XPU. It never rewrites an explicit device.
constexpr Preset kHfAccelerate{
    "hf-accelerate", "HF accelerate PartialState: XLA, then default_device (MPS > CUDA > XPU)",
    {K::XLA, K::MPS, K::CUDA, K::XPU}, 4, false, false};

// lightning/pytorch/trainer/connectors/accelerator_connector.py _choose_auto_accelerator:
// TPU (XLA) > MPS > CUDA > CPU. Explicit accelerators are honoured as given.
constexpr Preset kLightning{
    "lightning", "Lightning _choose_auto_accelerator: TPU > MPS > CUDA > CPU",
    {K::XLA, K::MPS, K::CUDA}, 3, false, false};

constexpr const Preset* kPresets[] = {&kTorchDevice, &kCudaFirst, &kHfAccelerate, &kLightning};

// Each order names accelerators only, each at most once.
constexpr bool orders_are_valid() {
  for (const Preset* p : kPresets) {
    if (p->order_len == 0 || p->order_len > p->order.size()) return false;
    for (std::uint8_t i = 0; i < p->order_len; ++i) {
      if (p->order[i] == K::CPU) return false;
      for (std::uint8_t j = 0; j < i; ++j)
        if (p->order[j] == p->order[i]) return false;
    }
  }
  return true;
}
static_assert(orders_are_valid(), "a preset's order must list distinct accelerators (CPU is implicit, last)");
static_assert(named::names_unique(kPresets), "preset names must be unique");

}  // namespace

const Preset* find_preset(std::string_view name) noexcept {
  const auto* row = named::find(kPresets, name);
  return row ? *row : nullptr;
}

const Preset& default_preset() noexcept { return kTorchDevice; }

std::string preset_names() {
  return named::names(kPresets);
}

const Preset* const* all_presets(std::size_t* count) noexcept {
  *count = sizeof(kPresets) / sizeof(kPresets[0]);
  return kPresets;
}

}  // namespace crossdev
