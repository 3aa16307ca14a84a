// Behaviour of the policy engine beyond the matrix rows: logging, state, presets as data.
#include <cstdio>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "log/logger.h"
#include "policy/redirect_policy.h"

namespace crossdev {
namespace {

class CapturedLog {
 public:
  explicit CapturedLog(LogLevel level) : saved_(Logger::global().level()) {
    Logger::global().set_level(level);
    Logger::global().set_text_sink([this](std::string_view line) { lines.emplace_back(line); });
  }
  ~CapturedLog() {
    Logger::global().set_text_sink(nullptr);
    Logger::global().set_level(saved_);
  }
  std::vector<std::string> lines;

 private:
  LogLevel saved_;
};

TEST(RedirectPolicy, EveryRedirectIsLoggedAsRequestedArrowUsed) {
  CapturedLog log(LogLevel::Info);
  const HostProfile host = HostProfile::named_or_spec("mps");
  PolicyState state;
  const DeviceSpec cpu = parse_device("cpu");
  RedirectPolicy().resolve(&cpu, host, state);
  ASSERT_EQ(log.lines.size(), 1u);
  EXPECT_NE(log.lines[0].find("cpu -> mps:0"), std::string::npos) << log.lines[0];
  EXPECT_NE(log.lines[0].find("redirected"), std::string::npos);
}

TEST(RedirectPolicy, HonouredRequestsAreNotLoggedAndWarningLevelHidesInfo) {
  {
    CapturedLog log(LogLevel::Debug);
    const DeviceSpec mps = parse_device("mps");
    PolicyState state;
    RedirectPolicy().resolve(&mps, HostProfile::named_or_spec("mps"), state);
    EXPECT_TRUE(log.lines.empty());
  }
  {
    CapturedLog log(LogLevel::Warning);
    const DeviceSpec cpu = parse_device("cpu");
    PolicyState state;
    RedirectPolicy().resolve(&cpu, HostProfile::named_or_spec("mps"), state);
    EXPECT_TRUE(log.lines.empty());
  }
}

TEST(RedirectPolicy, JsonLinesSinkRecordsRequestedAndUsed) {
  const std::string path = ::testing::TempDir() + "/crossdev_policy_log.jsonl";
  std::remove(path.c_str());
  {
    CapturedLog log(LogLevel::Info);
    Logger::global().set_jsonl_path(path);
    const DeviceSpec cuda = parse_device("cuda:1");
    PolicyState state;
    RedirectPolicy().resolve(&cuda, HostProfile::named_or_spec("mps"), state, Via::To);
    Logger::global().set_jsonl_path("");
  }
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  EXPECT_NE(text.find("\"requested\":\"cuda:1\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"used\":\"mps:0\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"via\":\"to\""), std::string::npos) << text;
}

TEST(RedirectPolicy, LogLevelNamesFromSeed002) {
  EXPECT_EQ(parse_log_level("DEBUG"), LogLevel::Debug);
  EXPECT_EQ(parse_log_level("info"), LogLevel::Info);
  EXPECT_EQ(parse_log_level("WARNING"), LogLevel::Warning);
  EXPECT_EQ(parse_log_level("ERROR"), LogLevel::Error);
  EXPECT_FALSE(parse_log_level("LOUD").has_value());
}

TEST(RedirectPolicy, OverrideStateIsCarriedByTheCaller) {
  const HostProfile host = HostProfile::named_or_spec("cuda-x1");
  const DeviceSpec toggle = parse_device("cpu:-1");
  const DeviceSpec cpu = parse_device("cpu");
  RedirectPolicy policy;
  PolicyState a, b;
  policy.resolve(&toggle, host, a);
  EXPECT_TRUE(a.cpu_override);
  EXPECT_FALSE(b.cpu_override);
  EXPECT_EQ(policy.resolve(&cpu, host, a).resolved.kind, DeviceKind::CPU);
  EXPECT_EQ(policy.resolve(&cpu, host, b).resolved.kind, DeviceKind::CUDA);
}

TEST(RedirectPolicy, AllowRedirectsOnlyTrue) {
  EXPECT_TRUE(allow_redirects_value("true"));
  EXPECT_TRUE(allow_redirects_value("TrUe"));
  EXPECT_FALSE(allow_redirects_value("1"));
  EXPECT_FALSE(allow_redirects_value("true "));
  EXPECT_FALSE(allow_redirects_value(""));
}

TEST(RedirectPolicy, DefaultDeviceFollowsPresetOrderAsData) {
  const HostProfile all = HostProfile::named_or_spec("all");
  const std::vector<const Preset*> presets = all_presets();
  ASSERT_FALSE(presets.empty());
  for (const Preset* preset : presets) {
    const DeviceSpec d = RedirectPolicy(*preset).default_device(all);
    EXPECT_EQ(d.kind, preset->order[0]) << preset->name;  // "all" has every kind
  }
}

TEST(HostProfile, SimulatedKindsAreLabelledAndRealOnesWin) {
  const HostProfile host = HostProfile::probe_with_simulation("cuda:2,mps");
  for (DeviceKind k : {DeviceKind::CUDA, DeviceKind::MPS}) {
    const HostProfile real = HostProfile::probe();
    EXPECT_EQ(host.provenance(k), real.has(k) ? Provenance::Real : Provenance::Simulated);
  }
  EXPECT_EQ(host.provenance(DeviceKind::CPU), Provenance::Real);
  EXPECT_TRUE(host.any_simulated() || HostProfile::probe().has(DeviceKind::CUDA));
}

TEST(HostProfile, BadSimulateSpecNamesTheItem) {
  try {
    HostProfile::probe_with_simulation("cuda:2,gpu");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'gpu'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(HostProfile::probe_with_simulation("mps:2"), std::invalid_argument);
  EXPECT_THROW(HostProfile::probe_with_simulation("cuda:0"), std::invalid_argument);
  EXPECT_THROW(HostProfile::probe_with_simulation("cuda,cuda"), std::invalid_argument);
}

}  // namespace
}  // namespace crossdev
