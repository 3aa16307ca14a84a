#pragma once
// One memory-statistics record for every device crossdev measures or emulates: the manager's
// answers (DeviceManager::memory_stats, from a real backend or the masquerade) and the sim
// backend's allocator (sim::memory_stats). Byte counts are torch.cuda.memory_stats()'s; -1 means
// "this source does not know", and `source` says where the numbers come from. Exposed to Python
// as crossdev.MemoryStats (python/bindings/memory_stats.cpp).
#include <string>

namespace crossdev {

struct MemoryStats {
  long long allocated = -1;       // bytes in live tensors (or the nearest honest measure, see source)
  long long reserved = -1;        // bytes held by the allocator, used or cached
  long long peak_allocated = -1;  // high-water mark of `allocated`
  long long peak_reserved = -1;   // high-water mark of `reserved`
  long long total = -1;           // capacity: the device's memory, or a sim device's limit (-1: none)
  long long num_allocs = -1;      // successful non-empty allocations
  long long num_frees = -1;
  long long num_cache_hits = -1;  // allocations served from the allocator's cache
  long long live_blocks = -1;
  std::string scope;   // "device allocator", "process", "simulated", "sim device allocator"
  std::string source;  // e.g. "c10 CachingDeviceAllocator::getDeviceStats", "/proc/self/status"
  bool simulated = false;  // a simulated device answered (the masquerade or the sim backend)
};

}  // namespace crossdev
