#include "policy/preset.h"

#include <mutex>
#include <stdexcept>
#include <vector>

#include "util/load_library.h"
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

// Each order names accelerators only, each at most once ("" when valid).
constexpr const char* order_problem(const Preset& p) {
  if (p.order_len == 0 || p.order_len > p.order.size()) return "order_len must be 1.." "kNumDeviceKinds";
  for (std::uint8_t i = 0; i < p.order_len; ++i) {
    if (p.order[i] == K::CPU) return "the order lists cpu (it is implicit, last)";
    for (std::uint8_t j = 0; j < i; ++j)
      if (p.order[j] == p.order[i]) return "the order lists an accelerator twice";
  }
  return "";
}
constexpr bool orders_are_valid() {
  for (const Preset* p : kPresets)
    if (order_problem(*p)[0] != '\0') return false;
  return true;
}
static_assert(orders_are_valid(), "a preset's order must list distinct accelerators (CPU is implicit, last)");
static_assert(named::names_unique(kPresets), "preset names must be unique");

// Presets loaded libraries register (CROSSDEV_REGISTER_PRESET), after the built-in rows; never freed.
struct Registered {
  std::mutex mutex;
  std::vector<const Preset*> rows;
};
Registered& registered() {
  static Registered r;
  return r;
}

}  // namespace

std::vector<const Preset*> all_presets() {
  std::vector<const Preset*> out(std::begin(kPresets), std::end(kPresets));
  Registered& r = registered();
  std::lock_guard<std::mutex> lock(r.mutex);
  out.insert(out.end(), r.rows.begin(), r.rows.end());
  return out;
}

const Preset* find_preset(std::string_view name) noexcept {
  if (const auto* row = named::find(kPresets, name)) return *row;
  Registered& r = registered();
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto* row = named::find(r.rows, name);
  return row ? *row : nullptr;
}

const Preset& default_preset() noexcept { return kTorchDevice; }

std::string preset_names() { return named::names(all_presets()); }

PresetRegistrar::PresetRegistrar(const Preset& preset) noexcept {
  try {
    register_preset(preset);
  } catch (const std::exception& e) {
    report_registration_error(e.what());
  }
}

void register_preset(const Preset& preset) {
  const std::string name = preset.name ? preset.name : "";
  if (name.empty()) throw std::invalid_argument("register_preset: a preset needs a name");
  if (const char* why = order_problem(preset); why[0] != '\0')
    throw std::invalid_argument("register_preset('" + name + "'): " + why);
  if (find_preset(name)) throw std::invalid_argument("register_preset('" + name + "'): a preset of that name exists");
  Registered& r = registered();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.rows.push_back(&preset);
}

}  // namespace crossdev
