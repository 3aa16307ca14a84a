#pragma once
// Shared implementation for real accelerators whose LibTorch allocator is a
// c10::DeviceAllocator (CUDA, XPU, MPS): statistics, empty_cache and memory info through
// the same generic interface torch.accelerator uses, so no vendor headers are needed.
#include "manager/backend.h"

namespace crossdev::manager {

class AcceleratorBackend : public DeviceBackend {
 public:
  AcceleratorBackend(DeviceKind kind, BackendTraits traits) : kind_(kind), traits_(std::move(traits)) {}
  DeviceKind kind() const noexcept override { return kind_; }
  const BackendTraits& traits() const noexcept override { return traits_; }
  MemoryStats memory_stats(int index) const override;
  EmptyCacheResult empty_cache(int index) override;
  UnifiedProperties properties(int index) const override;  // name and total memory; vendor fields -1
  bool has_native_streams() const noexcept override { return true; }

 private:
  DeviceKind kind_;
  BackendTraits traits_;
};

}  // namespace crossdev::manager
