// XPU (Intel GPUs): allocator statistics like CUDA's; bfloat16 preferred.
#include "manager/backends/accelerator_backend.h"
#include "manager/backend_registry.h"

namespace crossdev::manager {
namespace {

DeviceBackend* make_backend() {
  BackendTraits traits{{}, c10::ScalarType::BFloat16, "torch.autocast('xpu') defaults to bfloat16",
                       "torch.autocast docs: XPU autocast dtype"};
  return new AcceleratorBackend(DeviceKind::XPU, std::move(traits));
}

CROSSDEV_REGISTER_BACKEND(make_backend());

}  // namespace

}  // namespace crossdev::manager
