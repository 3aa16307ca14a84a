// Emulated stream/event semantics follow CUDA's, with c10's exact error texts and types.
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "manager/stream_event.h"

namespace crossdev::manager {
namespace {

TEST(StreamEvent, ErrorOrderMatchesCuda) {
  DeviceManager m{HostProfile()};
  const DeviceSpec cpu = DeviceSpec::of(DeviceKind::CPU);
  Stream s(m, cpu);
  EXPECT_TRUE(s.emulated());
  Event untimed(m, cpu, false), a(m, cpu, true), b(m, cpu, true);
  // enable_timing is checked before recording (c10/cuda/CUDAEvent.h order), as a ValueError.
  EXPECT_THROW((void)untimed.elapsed_time(b), c10::ValueError);
  try {
    (void)a.elapsed_time(b);
    FAIL();
  } catch (const c10::ValueError& e) {
    EXPECT_EQ(std::string(e.what_without_backtrace()), "Both events must be recorded before calculating elapsed time.");
  }
  a.record(s);
  EXPECT_THROW((void)a.elapsed_time(b), c10::ValueError);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  b.record(s);
  const double ms = a.elapsed_time(b);
  EXPECT_GE(ms, 5.0);
  EXPECT_LE(a.elapsed_time(b), ms + 1e-9);  // recorded times do not move
  EXPECT_LT(b.elapsed_time(a), 0.0);        // reversed order gives a negative span, as CUDA does
}

TEST(StreamEvent, UnrecordedEventIsCompleteAndRecordChecksTheDevice) {
  DeviceManager m{HostProfile::named_or_spec("cuda-x2")};
  Event e(m, parse_device("cuda:1"));
  EXPECT_FALSE(e.recorded());
  EXPECT_TRUE(e.query());
  e.synchronize();
  Stream other_index(m, parse_device("cuda:0"));
  EXPECT_THROW(e.record(other_index), c10::Error);
  Stream same(m, parse_device("cuda:1"));
  e.record(same);
  EXPECT_TRUE(e.recorded());
  EXPECT_TRUE(same.query());
  same.wait_event(e);
}

TEST(StreamEvent, AbsentDeviceIsRefused) {
  DeviceManager m{HostProfile()};
  EXPECT_THROW(Stream(m, parse_device("cuda:0")), std::invalid_argument);
}

}  // namespace
}  // namespace crossdev::manager
