// Exact allocator accounting: allocated = requested bytes, reserved = 512-byte blocks held
// (live + cached), peaks, cache reuse, empty_cache and the capacity limit's out-of-memory error.
#include "sim_test_support.h"

namespace crossdev::sim::testing {
namespace {

class SimMemoryTest : public SimTest {};

TEST_F(SimMemoryTest, AllocatedCountsRequestedBytesAndReservedWholeBlocks) {
  const MemoryStats before = memory_stats(0);
  {
    at::Tensor t = at::empty({3, 5}, on_sim().dtype(at::kFloat));  // 60 bytes -> one 512-byte block
    const MemoryStats during = memory_stats(0);
    EXPECT_EQ(during.allocated - before.allocated, 60);
    EXPECT_EQ(during.reserved - before.reserved, 512);
    EXPECT_EQ(during.num_allocs - before.num_allocs, 1);
    EXPECT_EQ(during.live_blocks - before.live_blocks, 1);
  }
  const MemoryStats after = memory_stats(0);
  EXPECT_EQ(after.allocated, before.allocated);
  EXPECT_EQ(after.reserved - before.reserved, 512) << "a freed block stays cached";
  EXPECT_EQ(after.num_frees - before.num_frees, 1);
  empty_cache();
  EXPECT_EQ(memory_stats(0).reserved, before.reserved);
}

TEST_F(SimMemoryTest, LargeAllocationRoundsUpToBlockMultiple) {
  const MemoryStats before = memory_stats(0);
  at::Tensor t = at::empty({1000}, on_sim().dtype(at::kDouble));  // 8000 bytes -> 16 blocks (8192)
  const MemoryStats during = memory_stats(0);
  EXPECT_EQ(during.allocated - before.allocated, 8000);
  EXPECT_EQ(during.reserved - before.reserved, 8192);
}

TEST_F(SimMemoryTest, FreedBlockIsReusedForTheSameRoundedSize) {
  { at::Tensor a = at::empty({25}, on_sim().dtype(at::kFloat)); }  // 100 bytes
  const MemoryStats before = memory_stats(0);
  at::Tensor b = at::empty({50}, on_sim().dtype(at::kFloat));  // 200 bytes, same 512-byte block
  const MemoryStats after = memory_stats(0);
  EXPECT_EQ(after.num_cache_hits - before.num_cache_hits, 1);
  EXPECT_EQ(after.reserved, before.reserved);
  EXPECT_EQ(after.allocated - before.allocated, 200);
}

TEST_F(SimMemoryTest, PeakTracksHighWaterMarkUntilReset) {
  reset_peak_memory_stats(0);
  const std::int64_t base = memory_stats(0).allocated;
  { at::Tensor big = at::empty({1000}, on_sim().dtype(at::kFloat)); }  // 4000 bytes, then freed
  at::Tensor small = at::empty({10}, on_sim().dtype(at::kFloat));      // 40 bytes
  MemoryStats s = memory_stats(0);
  EXPECT_EQ(s.peak_allocated, base + 4000);
  EXPECT_EQ(s.allocated, base + 40);
  reset_peak_memory_stats(0);
  s = memory_stats(0);
  EXPECT_EQ(s.peak_allocated, s.allocated);
  EXPECT_EQ(s.peak_reserved, s.reserved);
}

TEST_F(SimMemoryTest, EmptyTensorAllocatesNothing) {
  const MemoryStats before = memory_stats(0);
  at::Tensor t = at::empty({0, 4}, on_sim());
  EXPECT_EQ(memory_stats(0).allocated, before.allocated);
  EXPECT_EQ(memory_stats(0).num_allocs, before.num_allocs);
}

TEST_F(SimMemoryTest, StatsArePerDevice) {
  use(ProfileId::CudaLike, 2);
  const MemoryStats d0 = memory_stats(0);
  const MemoryStats d1 = memory_stats(1);
  at::Tensor t = at::empty({16}, on_sim(1).dtype(at::kFloat));
  EXPECT_EQ(memory_stats(1).allocated - d1.allocated, 64);
  EXPECT_EQ(memory_stats(0).allocated, d0.allocated);
}

TEST_F(SimMemoryTest, ExceedingTheLimitRaisesTheProfilesOutOfMemoryError) {
  use(ProfileId::CudaLike);
  const std::int64_t reserved = memory_stats(0).reserved;
  SimAllocator::instance().set_memory_limit(0, reserved + 1024);
  at::Tensor fits = at::empty({256}, on_sim().dtype(at::kFloat));  // 1024 bytes
  try {
    at::Tensor too_big = at::empty({512}, on_sim().dtype(at::kFloat));  // 2048 bytes
    ADD_FAILURE() << "allocation beyond the limit succeeded";
  } catch (const c10::OutOfMemoryError& e) {
    const std::string text = e.what_without_backtrace();
    EXPECT_EQ(text.rfind("CUDA out of memory. Tried to allocate 2.00 KiB.", 0), 0u) << text;
  }
  SimAllocator::instance().set_memory_limit(0, -1);
  EXPECT_NO_THROW(at::empty({512}, on_sim().dtype(at::kFloat)));
}

}  // namespace
}  // namespace crossdev::sim::testing
