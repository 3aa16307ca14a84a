// mylib's team preset: the device order mylib's own get_device() uses (XPU first: the team's fleet
// is Intel GPUs, CUDA second), registered with crossdev so redirect rows can check it. Built
// against the installed crossdev through find_package(crossdev) (crossdev::core: policy/preset.h).
#include "policy/preset.h"

namespace {

using K = crossdev::DeviceKind;

constexpr crossdev::Preset kMylibXpuFirst{
    "mylib-xpu-first", "examples/downstream: mylib's device order (XPU > CUDA > CPU)",
    {K::XPU, K::CUDA}, 2, /*redirects_by_default=*/false, /*redirect_present_to_preferred=*/false};

}  // namespace

CROSSDEV_REGISTER_PRESET(kMylibXpuFirst);
