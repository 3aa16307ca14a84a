// The device chain as data, and the backend table: a backend registered for a kind answers
// for that kind's real devices (how a new device kind plugs in).
#include <c10/util/Exception.h>
#include <gtest/gtest.h>

#include "manager/backend_registry.h"
#include "manager/device_manager.h"

namespace crossdev::manager {
namespace {

TEST(DeviceChain, ParseRejectsBadChainsWithTheReason) {
  EXPECT_EQ(DeviceChain::parse("xla, cuda ,cpu").str(), "xla,cuda,cpu");
  EXPECT_EQ(DeviceChain::parse("tpu,cpu").str(), "xla,cpu");  // seed 001 alias
  auto message = [](const char* text) {
    try {
      (void)DeviceChain::parse(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("mps,cuda").find("must end with cpu"), std::string::npos);
  EXPECT_NE(message("mps,gpu,cpu").find("unknown device kind 'gpu'"), std::string::npos);
  EXPECT_NE(message("cuda,cuda,cpu").find("listed twice"), std::string::npos);
}

TEST(DeviceChain, Seed003SkipsAbsentKinds) {
  const DeviceChain chain = DeviceChain::seed003();
  const HostProfile mps_only = HostProfile::named_or_spec("mps");
  const ChainStep step = chain.next(DeviceSpec::of(DeviceKind::MPS), mps_only, "test");
  EXPECT_EQ(step.to.str(), "cpu");
  EXPECT_NE(step.reason.find("mps failed (test)"), std::string::npos) << step.reason;
  const ChainStep end = chain.next(DeviceSpec::of(DeviceKind::CPU), mps_only, "test");
  EXPECT_TRUE(end.to.same_device(DeviceSpec::of(DeviceKind::CPU)));
}

class CountingCpuBackend final : public DeviceBackend {
 public:
  DeviceKind kind() const noexcept override { return DeviceKind::CPU; }
  const BackendTraits& traits() const noexcept override {
    static const BackendTraits t{{{c10::ScalarType::Half, c10::ScalarType::Float, "test backend has no half"}},
                                 c10::ScalarType::Float, "test", "test"};
    return t;
  }
  MemoryStats memory_stats(int) const override {
    MemoryStats m;
    m.allocated = 42;
    m.source = "counting test backend";
    return m;
  }
  EmptyCacheResult empty_cache(int) override { return {true, 7, "counted"}; }
  UnifiedProperties properties(int) const override {
    UnifiedProperties p;
    p.name = "counting cpu";
    return p;
  }
};

TEST(BackendRegistry, ARegisteredBackendAnswersForItsKind) {
  CountingCpuBackend counting;  // not owned by the registry: put the built-in one back before it dies
  struct Restore {
    DeviceBackend* previous;
    ~Restore() { register_backend(*previous); }
  } restore{register_backend(counting)};
  ASSERT_NE(restore.previous, nullptr);
  EXPECT_EQ(&backend_for(DeviceKind::CPU), &counting);
  DeviceManager m{HostProfile()};
  const DeviceSpec cpu = DeviceSpec::of(DeviceKind::CPU);
  EXPECT_EQ(m.memory_stats(cpu).allocated, 42);
  EXPECT_EQ(m.empty_cache(cpu).released, 7);
  EXPECT_EQ(m.properties(cpu).name, "counting cpu");
  const Capabilities caps = m.capabilities(cpu);
  EXPECT_FALSE(caps.supports(c10::ScalarType::Half));
  EXPECT_EQ(caps.low_precision, c10::ScalarType::Float);
}

// Every kind of the device-kind table has a backend that answers for that kind, registered when
// the library loaded; the registry hands out the same object every time.
TEST(BackendRegistry, EveryDeviceKindHasItsOwnBackend) {
  for (DeviceKind kind : kAllDeviceKinds) {
    DeviceBackend& backend = backend_for(kind);
    EXPECT_EQ(backend.kind(), kind) << kind_name(kind);
    EXPECT_EQ(&backend_for(kind), &backend) << kind_name(kind);
  }
}

TEST(BackendRegistry, SimulatedDevicesNeverReachTheBackend) {
  DeviceManager m{HostProfile::named_or_spec("cuda-x1")};
  const DeviceSpec cuda = parse_device("cuda:0");
  const MemoryStats s = m.memory_stats(cuda);
  EXPECT_TRUE(s.simulated);
  EXPECT_EQ(s.allocated, -1);
  EXPECT_FALSE(m.empty_cache(cuda).supported);
  EXPECT_THROW(m.memory_stats(parse_device("cuda:1")), std::invalid_argument);
  EXPECT_THROW(m.memory_stats(parse_device("mps")), std::invalid_argument);
}

TEST(BackendRegistry, RealXlaIsRefusedWithAReason) {
  try {
    (void)backend_for(DeviceKind::XLA).memory_stats(0);
    FAIL();
  } catch (const c10::NotImplementedError& e) {
    EXPECT_NE(std::string(e.what_without_backtrace()).find("can only be simulated"), std::string::npos);
  }
}

}  // namespace
}  // namespace crossdev::manager
