// Device-string grammar: crossdev's parser against c10::Device (the parser torch.device uses)
// on one table of strings, plus the crossdev extensions (tpu alias, cpu:-1 override).
#include <c10/core/Device.h>
#include <c10/util/Exception.h>
#include <gtest/gtest.h>

#include "device/device_spec.h"

namespace crossdev {
namespace {

// Plain PyTorch spellings: crossdev must agree with c10 on accept/reject and on (type, index).
const char* const kPlainStrings[] = {
    "cpu", "cpu:0", "cpu:3", "cuda", "cuda:0", "cuda:1", "cuda:15", "cuda:127", "mps", "mps:0", "xpu", "xpu:2",
    "xla", "xla:1", "cuda:01", "cuda:00", "CUDA", "Cpu", "cuda:-1", "cuda:-2", " cuda", "cuda ", "cuda:1:2",
    "cuda:", ":0", "", "cuda:+1", "cu da", "cuda:0x1", "cuda::1", "cuda_x", "gpu", "gpu:0"};

TEST(DeviceSpec, AgreesWithC10OnPlainStrings) {
  for (const char* text : kPlainStrings) {
    SCOPED_TRACE(std::string("'") + text + "'");
    bool c10_ok = true;
    c10::Device c10_device(c10::DeviceType::CPU);
    try {
      c10_device = c10::Device(std::string(text));
    } catch (const c10::Error&) {
      c10_ok = false;
    }
    DeviceSpec spec;
    const bool ours_ok = try_parse_device(text, spec) == ParseStatus::Ok;
    EXPECT_EQ(ours_ok, c10_ok);
    if (ours_ok && c10_ok) {
      EXPECT_EQ(spec.to_c10(), c10_device);
      EXPECT_EQ(DeviceSpec::from_c10(c10_device), spec);
    }
  }
}

TEST(DeviceSpec, TpuIsAnAliasForXla) {
  EXPECT_EQ(parse_device("tpu"), DeviceSpec::of(DeviceKind::XLA));
  EXPECT_EQ(parse_device("tpu:3"), DeviceSpec::of(DeviceKind::XLA, 3));
  EXPECT_EQ(parse_device("tpu:3").to_c10(), c10::Device(c10::DeviceType::XLA, 3));
  EXPECT_EQ(parse_device("tpu").str(), "xla");
}

TEST(DeviceSpec, CpuOverrideIsItsOwnSpelling) {
  const DeviceSpec o = parse_device("cpu:-1");
  EXPECT_TRUE(o.cpu_override);
  EXPECT_EQ(o.str(), "cpu:-1");
  EXPECT_EQ(o.to_c10(), c10::Device(c10::DeviceType::CPU));
  EXPECT_THROW(parse_device("cuda:-1"), DeviceSpecError);
  EXPECT_THROW(parse_device("tpu:-1"), DeviceSpecError);
  EXPECT_THROW(parse_device("cpu:-2"), DeviceSpecError);
}

TEST(DeviceSpec, ErrorsQuoteInputAndListChoices) {
  try {
    parse_device("CUDA");
    FAIL();
  } catch (const DeviceSpecError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'CUDA'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("cpu, cuda, mps, xpu, xla (alias: tpu)"), std::string::npos) << msg;
  }
  try {
    parse_device("meta");
    FAIL();
  } catch (const DeviceSpecError& e) {
    EXPECT_NE(std::string(e.what()).find("valid in PyTorch but not a crossdev target"), std::string::npos);
  }
}

TEST(DeviceSpec, IndicesBeyondDeviceIndexAreRejectedNotWrapped) {
  // torch.device('cuda:128') silently becomes cuda:-128 (int8 wrap); crossdev refuses it.
  EXPECT_EQ(parse_device("cuda:127").index, 127);
  DeviceSpec spec;
  std::string error;
  EXPECT_EQ(try_parse_device("cuda:128", spec, &error), ParseStatus::IndexRange);
  EXPECT_NE(error.find("out of range"), std::string::npos);
  EXPECT_EQ(try_parse_device("cuda:99999999999", spec), ParseStatus::IndexRange);
}

TEST(DeviceSpec, NoneAndZeroAreTheSameDeviceOnCpuAndMpsOnly) {
  EXPECT_TRUE(parse_device("mps").same_device(parse_device("mps:0")));
  EXPECT_TRUE(parse_device("cpu").same_device(parse_device("cpu:0")));
  EXPECT_FALSE(parse_device("cuda").same_device(parse_device("cuda:0")));  // "cuda" is the current device
  EXPECT_FALSE(parse_device("cpu").same_device(parse_device("cpu:-1")));
}

TEST(DeviceSpec, FromC10RejectsOtherKinds) {
  EXPECT_THROW(DeviceSpec::from_c10(c10::Device(c10::DeviceType::Meta)), DeviceSpecError);
}

}  // namespace
}  // namespace crossdev
