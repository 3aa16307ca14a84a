// Checkpoint round trips through the map-location policy, and the device-operation log's
// JSON lines and summary.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "manager/checkpoint.h"
#include "manager/consistency.h"
#include "manager/op_log.h"

namespace crossdev::manager {
namespace {

struct TempFile {
  std::string path = (std::filesystem::temp_directory_path() / ("crossdev_mgr_test_" + std::to_string(::getpid()) + "_" +
                                                                ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                         .string();
  ~TempFile() { std::remove(path.c_str()); }
};

TEST(Checkpoint, SavedDeviceIsResolvedThroughThePolicy) {
  TempFile file;
  DeviceManager cuda_host{HostProfile::named_or_spec("cuda-x2")};
  const at::Tensor w = at::arange(12, at::kFloat).reshape({3, 4});
  const at::Tensor b = at::arange(3, at::kDouble);
  save_checkpoint(file.path, {{"w", place_on(cuda_host, {w}, {parse_device("cuda:1")})[0]},
                              {"b", place_on(cuda_host, {b}, {parse_device("cuda:1")})[0]}});
  DeviceManager mps_host{HostProfile::named_or_spec("mps")};
  const auto loaded = load_checkpoint(mps_host, file.path, MapLocation::parse("policy"));
  ASSERT_EQ(loaded.size(), 2u);
  for (const auto& t : loaded) {
    EXPECT_EQ(t.saved_device.str(), "cuda:1");
    EXPECT_EQ(t.value.device.str(), "mps");
    EXPECT_NE(t.placement_reason.find("redirected"), std::string::npos) << t.placement_reason;
  }
  const auto& lb = loaded[0].name == "b" ? loaded[0] : loaded[1];
  EXPECT_EQ(lb.value.tensor.scalar_type(), at::kFloat);  // float64 cannot live on mps
  ASSERT_EQ(lb.casts.size(), 1u);
  EXPECT_TRUE(at::equal(lb.value.tensor, b.to(at::kFloat)));
}

TEST(Checkpoint, NotAZipIsPyTorchsOwnError) {
  TempFile file;
  std::ofstream(file.path) << "definitely not a zip";
  DeviceManager m{HostProfile()};
  try {
    (void)load_checkpoint(m, file.path, MapLocation::parse("cpu"));
    FAIL();
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what_without_backtrace()).find("PytorchStreamReader failed reading zip archive"), std::string::npos);
  }
  EXPECT_THROW((void)MapLocation::parse("gpu:0"), DeviceSpecError);
}

TEST(OpLog, EntriesAreJsonLinesAndTheSummaryCountsThem) {
  OpLog log;
  TempFile file;
  log.set_jsonl_path(file.path);
  {
    ScopedOp op("move", "ensure_device", "cuda:0", log);
    op.field("reason", "a \"quoted\" reason");
  }
  try {
    ScopedOp op("attempt", "matmul", "mps", log);
    throw std::runtime_error("boom");
  } catch (const std::runtime_error&) {
  }
  const auto entries = log.entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[1].outcome, "error");  // recorded while unwinding
  std::ifstream in(file.path);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    EXPECT_EQ(line.front(), '{');
    EXPECT_EQ(line.back(), '}');
  }
  EXPECT_EQ(lines, 2);
  const std::string summary = log.summary_json();
  EXPECT_NE(summary.find("\"entries\": 2"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\\\"quoted\\\""), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"errors\": 1"), std::string::npos) << summary;
}

}  // namespace
}  // namespace crossdev::manager
