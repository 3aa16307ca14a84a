// The "add a preset" recipe, from a user's library: one Preset and CROSSDEV_REGISTER_PRESET, no edit
// of crossdev. test_recipes.py loads this library and runs redirect rows that name the preset
// through the CLI and the pytest plugin, and reads it back from the Python module.
#include <cstdlib>
#include <cstring>

#include "policy/preset.h"

namespace {

using K = crossdev::DeviceKind;

// An XPU-first picker (a team with Intel GPUs first, CUDA second); it never rewrites an explicit
// device, like hf-accelerate and lightning.
constexpr crossdev::Preset kRecipeXpuFirst{
    "recipe-xpu-first", "tests/recipes: a preset registered by a loaded library (XPU > CUDA > MPS)",
    {K::XPU, K::CUDA, K::MPS}, 3, /*redirects_by_default=*/false, /*redirect_present_to_preferred=*/false};

// CROSSDEV_RECIPE_PRESET_BUG=1 registers this one instead: its name is taken, so loading the library
// must fail with the reason (exit 2), not terminate the process.
constexpr crossdev::Preset kTakenName{"torchdevice", "tests/recipes: a name that is taken", {K::XPU}, 1,
                                      false, false};

const crossdev::Preset& chosen() {
  const char* bug = std::getenv("CROSSDEV_RECIPE_PRESET_BUG");
  return bug != nullptr && std::strcmp(bug, "1") == 0 ? kTakenName : kRecipeXpuFirst;
}

}  // namespace

CROSSDEV_REGISTER_PRESET(chosen());
