#pragma once
// Host-memory allocator of the sim device, with exact per-device accounting.
//
//   allocated  bytes the live tensors asked for (sum of requested sizes: numel * itemsize for
//              a fresh contiguous tensor), so tests can predict it exactly;
//   reserved   bytes held from the host: live blocks plus cached free blocks, each rounded up
//              to kBlockBytes (like CUDA's caching allocator, whose reserved >= allocated);
//   peak       the high-water marks of both since the last reset_peak_stats().
//
// Freed blocks go to a per-device cache keyed by rounded size and are reused by the next
// allocation of that size; empty_cache() returns every cached block to the host, so afterwards
// reserved == the rounded size of the live blocks (torch.cuda.empty_cache semantics).
#include <c10/core/Allocator.h>

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "device/memory_stats.h"

namespace crossdev::sim {

inline constexpr std::size_t kBlockBytes = 512;
inline constexpr int kMaxSimDevices = 16;

// The allocator's running counts per device; stats() reports them as a crossdev::MemoryStats.
struct DeviceCounters {
  std::int64_t allocated_bytes = 0;
  std::int64_t reserved_bytes = 0;
  std::int64_t peak_allocated_bytes = 0;
  std::int64_t peak_reserved_bytes = 0;
  std::int64_t num_allocs = 0;       // successful non-empty allocations
  std::int64_t num_frees = 0;
  std::int64_t num_cache_hits = 0;   // allocations served from the cache
  std::int64_t live_blocks = 0;
  std::int64_t limit_bytes = -1;     // capacity for reserved bytes; -1 = unlimited
};

class SimAllocator final : public c10::Allocator {
 public:
  static SimAllocator& instance();

  // Allocates on the current sim device (c10::DeviceGuard selects it).
  c10::DataPtr allocate(std::size_t nbytes) override;
  void copy_data(void* dest, const void* src, std::size_t count) const override;

  MemoryStats stats(int device) const;  // crossdev::MemoryStats (device/memory_stats.h)
  void reset_peak_stats(int device);
  void empty_cache();  // all devices
  // Beyond this many reserved bytes an allocation raises c10::OutOfMemoryError with the active
  // profile's out-of-memory text. -1 removes the limit.
  void set_memory_limit(int device, std::int64_t bytes);

  std::optional<int> device_of(const void* ptr) const;  // nullopt: not a live sim block
  // The lowest device index >= `from` that still holds live blocks, or -1.
  int first_device_with_live_memory(int from) const;

 private:
  SimAllocator() = default;
  struct Block {
    void* ptr;
    std::size_t requested;
    std::size_t rounded;
    int device;
  };
  static void delete_block(void* ctx);
  void release(Block* block);
  void check_device(int device) const;

  mutable std::mutex mutex_;
  std::array<DeviceCounters, kMaxSimDevices> stats_{};
  std::array<std::multimap<std::size_t, void*>, kMaxSimDevices> cache_{};  // rounded size -> block memory
  std::unordered_map<const void*, int> live_;                              // block memory -> device
};

}  // namespace crossdev::sim
