// CUDA: statistics and empty_cache through the caching allocator (c10::DeviceAllocator);
// name / compute capability / multiprocessor count from cudaDeviceProp when this build's
// LibTorch has CUDA. bf16 is preferred from compute capability 8.0 (Ampere), fp16 below.
#include "manager/backends/accelerator_backend.h"
#include "manager/backend_registry.h"

#ifdef CROSSDEV_HAVE_CUDA
#include <ATen/cuda/CUDAContext.h>
#endif

namespace crossdev::manager {
namespace {

class CudaBackend final : public AcceleratorBackend {
 public:
  CudaBackend()
      : AcceleratorBackend(DeviceKind::CUDA,
                           BackendTraits{{}, c10::ScalarType::BFloat16,
                                         "bfloat16 from compute capability 8.0, float16 below",
                                         "torch.cuda.is_bf16_supported(): compute capability >= 8.0"}) {}

  UnifiedProperties properties(int index) const override {
    UnifiedProperties p = AcceleratorBackend::properties(index);
#ifdef CROSSDEV_HAVE_CUDA
    const cudaDeviceProp* prop = at::cuda::getDeviceProperties(static_cast<c10::DeviceIndex>(index));
    p.name = prop->name;
    p.total_memory = static_cast<long long>(prop->totalGlobalMem);
    p.major = prop->major;
    p.minor = prop->minor;
    p.multiprocessor_count = prop->multiProcessorCount;
    p.source = "at::cuda::getDeviceProperties (cudaDeviceProp)";
#endif
    return p;
  }

  c10::ScalarType low_precision_for(const UnifiedProperties& p) const override {
    return (p.major >= 0 && p.major < 8) ? c10::ScalarType::Half : c10::ScalarType::BFloat16;
  }
};

CROSSDEV_REGISTER_BACKEND(new CudaBackend());

}  // namespace

}  // namespace crossdev::manager
