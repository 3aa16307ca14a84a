#include "sim/sim_allocator.h"

#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <new>
#include <string>

#include <c10/core/Device.h>
#include <c10/util/Exception.h>

#include "sim/sim_config.h"
#include "sim/sim_guard.h"

namespace crossdev::sim {
namespace {

std::size_t round_up(std::size_t n) { return (n + kBlockBytes - 1) / kBlockBytes * kBlockBytes; }

// "20.00 MiB", as CUDA's caching allocator formats sizes in its out-of-memory message.
std::string format_size(std::int64_t bytes) {
  char buf[64];
  const double b = static_cast<double>(bytes);
  if (bytes < (1 << 10)) std::snprintf(buf, sizeof buf, "%lld bytes", static_cast<long long>(bytes));
  else if (bytes < (1 << 20)) std::snprintf(buf, sizeof buf, "%.2f KiB", b / 1024.0);
  else if (bytes < (1LL << 30)) std::snprintf(buf, sizeof buf, "%.2f MiB", b / 1048576.0);
  else std::snprintf(buf, sizeof buf, "%.2f GiB", b / 1073741824.0);
  return buf;
}

}  // namespace

SimAllocator& SimAllocator::instance() {
  // Never destroyed: tensors released during static destruction still return their blocks here.
  static SimAllocator* allocator = new SimAllocator();
  return *allocator;
}

void SimAllocator::check_device(int device) const {
  TORCH_CHECK(device >= 0 && device < kMaxSimDevices, "sim: device index ", device, " outside 0..",
              kMaxSimDevices - 1);
}

c10::DataPtr SimAllocator::allocate(std::size_t nbytes) {
  const int device = current_device();
  check_device(device);
  const c10::Device where(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(device));
  if (nbytes == 0) return c10::DataPtr(nullptr, where);

  const std::size_t rounded = round_up(nbytes);
  void* memory = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    DeviceCounters& s = stats_[device];
    auto& cache = cache_[device];
    auto hit = cache.find(rounded);
    if (hit != cache.end()) {
      memory = hit->second;
      cache.erase(hit);
      ++s.num_cache_hits;
    } else {
      if (s.limit_bytes >= 0 && s.reserved_bytes + static_cast<std::int64_t>(rounded) > s.limit_bytes) {
        // Like CUDA's allocator: release the cache and retry before giving up.
        for (auto& [size, ptr] : cache) {
          std::free(ptr);
          s.reserved_bytes -= static_cast<std::int64_t>(size);
        }
        cache.clear();
      }
      if (s.limit_bytes >= 0 && s.reserved_bytes + static_cast<std::int64_t>(rounded) > s.limit_bytes) {
        const auto& p = current_profile();
        TORCH_CHECK_WITH(OutOfMemoryError, false, p.oom_prefix, " Tried to allocate ", format_size(nbytes), ". sim:",
                         device, " (simulated ", p.name, ") has a total capacity of ", format_size(s.limit_bytes),
                         " of which ", format_size(s.limit_bytes - s.reserved_bytes), " is free.");
      }
      memory = std::aligned_alloc(64, rounded);
      if (memory == nullptr) throw std::bad_alloc();
      s.reserved_bytes += static_cast<std::int64_t>(rounded);
      s.peak_reserved_bytes = std::max(s.peak_reserved_bytes, s.reserved_bytes);
    }
    s.allocated_bytes += static_cast<std::int64_t>(nbytes);
    s.peak_allocated_bytes = std::max(s.peak_allocated_bytes, s.allocated_bytes);
    ++s.num_allocs;
    ++s.live_blocks;
    live_.emplace(memory, device);
  }
  auto* block = new Block{memory, nbytes, rounded, device};
  return c10::DataPtr(memory, block, &SimAllocator::delete_block, where);
}

void SimAllocator::delete_block(void* ctx) { instance().release(static_cast<Block*>(ctx)); }

void SimAllocator::release(Block* block) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    DeviceCounters& s = stats_[block->device];
    s.allocated_bytes -= static_cast<std::int64_t>(block->requested);
    ++s.num_frees;
    --s.live_blocks;
    live_.erase(block->ptr);
    cache_[block->device].emplace(block->rounded, block->ptr);
  }
  delete block;
}

void SimAllocator::copy_data(void* dest, const void* src, std::size_t count) const {
  if (count > 0) std::memcpy(dest, src, count);
}

MemoryStats SimAllocator::stats(int device) const {
  check_device(device);
  std::lock_guard<std::mutex> lock(mutex_);
  const DeviceCounters& c = stats_[device];
  MemoryStats s;
  s.allocated = c.allocated_bytes;
  s.reserved = c.reserved_bytes;
  s.peak_allocated = c.peak_allocated_bytes;
  s.peak_reserved = c.peak_reserved_bytes;
  s.total = c.limit_bytes;
  s.num_allocs = c.num_allocs;
  s.num_frees = c.num_frees;
  s.num_cache_hits = c.num_cache_hits;
  s.live_blocks = c.live_blocks;
  s.scope = "sim device allocator";
  s.source = "crossdev::sim::SimAllocator";
  s.simulated = true;
  return s;
}

void SimAllocator::reset_peak_stats(int device) {
  check_device(device);
  std::lock_guard<std::mutex> lock(mutex_);
  stats_[device].peak_allocated_bytes = stats_[device].allocated_bytes;
  stats_[device].peak_reserved_bytes = stats_[device].reserved_bytes;
}

void SimAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (int d = 0; d < kMaxSimDevices; ++d) {
    for (auto& [size, ptr] : cache_[d]) {
      std::free(ptr);
      stats_[d].reserved_bytes -= static_cast<std::int64_t>(size);
    }
    cache_[d].clear();
  }
}

void SimAllocator::set_memory_limit(int device, std::int64_t bytes) {
  check_device(device);
  std::lock_guard<std::mutex> lock(mutex_);
  stats_[device].limit_bytes = bytes < 0 ? -1 : bytes;
}

std::optional<int> SimAllocator::device_of(const void* ptr) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(ptr);
  if (it == live_.end()) return std::nullopt;
  return it->second;
}

int SimAllocator::first_device_with_live_memory(int from) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (int d = std::max(from, 0); d < kMaxSimDevices; ++d)
    if (stats_[d].live_blocks > 0) return d;
  return -1;
}

}  // namespace crossdev::sim
