// CPU: always real. Memory numbers are process-wide (see host_memory.h for exactly what
// each field means); empty_cache trims the malloc heap, the only CPU-side cache there is.
#include <thread>

#include "manager/backend_registry.h"
#include "manager/host_memory.h"

namespace crossdev::manager {
namespace {

class CpuBackend final : public DeviceBackend {
 public:
  DeviceKind kind() const noexcept override { return DeviceKind::CPU; }
  const BackendTraits& traits() const noexcept override {
    static const BackendTraits t{{}, c10::ScalarType::BFloat16,
                                 "torch.autocast('cpu') defaults to bfloat16",
                                 "torch.autocast docs: CPU autocast dtype"};
    return t;
  }

  MemoryStats memory_stats(int) const override {
    const HostMemorySample s = sample_host_memory();
    MemoryStats m;
    m.allocated = s.malloc_in_use;
    m.reserved = s.malloc_held;
    m.peak_allocated = s.peak_rss;
    m.total = s.total;
    m.scope = "process";
    m.source = "glibc mallinfo2 (allocated, reserved), /proc/self/status VmHWM (peak RSS), /proc/meminfo MemTotal";
    return m;
  }

  EmptyCacheResult empty_cache(int) override {
    const long long released = trim_host_heap();
    return {released >= 0, released, released >= 0 ? "malloc_trim(0)" : "no malloc_trim on this C library"};
  }

  UnifiedProperties properties(int index) const override {
    UnifiedProperties p;
    p.name = host_cpu_name();
    p.device = DeviceSpec::of(DeviceKind::CPU, index);
    p.total_memory = sample_host_memory().total;
    p.multiprocessor_count = static_cast<int>(std::thread::hardware_concurrency());
    p.source = "/proc/cpuinfo, /proc/meminfo, std::thread::hardware_concurrency";
    return p;
  }
};

CROSSDEV_REGISTER_BACKEND(new CpuBackend());

}  // namespace

}  // namespace crossdev::manager
