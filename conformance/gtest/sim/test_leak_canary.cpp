// Proves the leak check can fail: this disabled test drops the bookkeeping of one sim block, which
// LeakSanitizer must report as a definite leak. run_leak_check.cmake runs it on purpose and
// requires the failure; the normal test run skips it.
#include <gtest/gtest.h>

#include "sim/sim_backend.h"

namespace crossdev::sim::testing {
namespace {

TEST(SimLeakCanary, DISABLED_LeaksOneSimBlock) {
  register_backend();
  c10::DataPtr data = SimAllocator::instance().allocate(100);
  void* lost = data.release_context();  // the deleter never runs: the block record leaks
  lost = nullptr;
  EXPECT_EQ(lost, nullptr);
}

}  // namespace
}  // namespace crossdev::sim::testing
