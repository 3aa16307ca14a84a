// XLA (TPU): never linked into LibTorch, so there is no real device to measure; every query
// about a real XLA device is an error that says so. Its traits (bf16 preferred, seed 001's
// no_grad inference context via context_policy) still describe simulated XLA devices.
#include <c10/util/Exception.h>
#include <cstdlib>

#include "manager/backend_registry.h"

namespace crossdev::manager {
namespace {

// ATen's error for an operation this build cannot do: c10::NotImplementedError (Python's
// NotImplementedError), with c10's context.
[[noreturn]] void no_real_xla(const char* what) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "xla ", what,
                              ": torch_xla is not part of LibTorch, so an XLA device can only be simulated here");
  std::abort();  // unreachable: the check above always throws
}

class XlaBackend final : public DeviceBackend {
 public:
  DeviceKind kind() const noexcept override { return DeviceKind::XLA; }
  const BackendTraits& traits() const noexcept override {
    static const BackendTraits t{{}, c10::ScalarType::BFloat16, "bfloat16: the TPU's native matmul type",
                                 "seed 001 (TPU/XLA), torch_xla docs: bf16 on TPU"};
    return t;
  }
  MemoryStats memory_stats(int) const override { no_real_xla("memory_stats"); }
  EmptyCacheResult empty_cache(int) override { no_real_xla("empty_cache"); }
  UnifiedProperties properties(int) const override { no_real_xla("properties"); }
};

CROSSDEV_REGISTER_BACKEND(new XlaBackend());

}  // namespace

}  // namespace crossdev::manager
