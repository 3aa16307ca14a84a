// XPU (Intel GPUs): allocator statistics like CUDA's; bfloat16 preferred.
#include "manager/backends/accelerator_backend.h"
#include "manager/backends/backends.h"

namespace crossdev::manager {

std::unique_ptr<DeviceBackend> make_xpu_backend() {
  BackendTraits traits{{}, c10::ScalarType::BFloat16, "torch.autocast('xpu') defaults to bfloat16",
                       "torch.autocast docs: XPU autocast dtype"};
  return std::make_unique<AcceleratorBackend>(DeviceKind::XPU, std::move(traits));
}

}  // namespace crossdev::manager
