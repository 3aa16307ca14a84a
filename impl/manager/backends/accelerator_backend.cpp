#include "manager/backends/accelerator_backend.h"

#include <ATen/Context.h>
#include <c10/core/Allocator.h>
#include <c10/core/CachingDeviceAllocator.h>

#include <type_traits>
#include <utility>

namespace crossdev::manager {
namespace {

// DeviceAllocator::getMemoryInfo came after DeviceAllocator itself (torch 2.9 has the allocator, not the call).
template <typename A, typename = void>
struct HasMemoryInfo : std::false_type {};
template <typename A>
struct HasMemoryInfo<A, std::void_t<decltype(std::declval<A&>().getMemoryInfo(c10::DeviceIndex{}))>> : std::true_type {};

// The device's total memory in bytes, or -1 where the allocator cannot say.
template <typename A>
long long total_memory(A* allocator, int index) {
  if constexpr (HasMemoryInfo<A>::value) {
    try {
      return static_cast<long long>(allocator->getMemoryInfo(static_cast<c10::DeviceIndex>(index)).second);
    } catch (const c10::Error&) {
      return -1;  // "getMemoryInfo is not implemented for this allocator yet."
    }
  } else {
    (void)allocator;
    (void)index;
    return -1;  // this LibTorch's DeviceAllocator has no getMemoryInfo
  }
}

constexpr auto kAggregate = static_cast<std::size_t>(c10::CachingAllocator::StatType::AGGREGATE);

c10::DeviceType c10_type(DeviceKind kind) { return kind_info(kind).c10_type; }

// The backend's caching allocator sizes its per-device tables at lazy initialization (the first
// tensor on the device); asking it for statistics before that is "Invalid device argument".
c10::DeviceAllocator* initialized_allocator(DeviceKind kind) {
  at::globalContext().lazyInitDevice(c10_type(kind));
  return c10::getDeviceAllocator(c10_type(kind));
}

}  // namespace

MemoryStats AcceleratorBackend::memory_stats(int index) const {
  auto* allocator = initialized_allocator(kind_);
  const auto stats = allocator->getDeviceStats(static_cast<c10::DeviceIndex>(index));
  MemoryStats m;
  m.allocated = stats.allocated_bytes[kAggregate].current;
  m.reserved = stats.reserved_bytes[kAggregate].current;
  m.peak_allocated = stats.allocated_bytes[kAggregate].peak;
  m.peak_reserved = stats.reserved_bytes[kAggregate].peak;
  m.total = total_memory(allocator, index);
  m.scope = "device allocator";
  m.source = std::string("c10::DeviceAllocator(") + kind_name(kind_) + ")::getDeviceStats / getMemoryInfo";
  return m;
}

EmptyCacheResult AcceleratorBackend::empty_cache(int index) {
  const long long before = memory_stats(index).reserved;
  initialized_allocator(kind_)->emptyCache();
  const long long after = memory_stats(index).reserved;
  return {true, before >= after ? before - after : 0, "c10::DeviceAllocator::emptyCache()"};
}

UnifiedProperties AcceleratorBackend::properties(int index) const {
  UnifiedProperties p;
  p.device = DeviceSpec::of(kind_, index);
  p.name = std::string(kind_name(kind_)) + ":" + std::to_string(index);
  p.total_memory = memory_stats(index).total;
  p.source = "c10::DeviceAllocator::getMemoryInfo";
  return p;
}

}  // namespace crossdev::manager
