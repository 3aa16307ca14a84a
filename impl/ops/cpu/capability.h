#pragma once
// Runtime choice of the instruction set the fused CPU kernels run with, as ATen's DispatchStub
// chooses its own (aten/src/ATen/native/DispatchStub.cpp). Every fused_cpu.cpp is compiled once
// per capability (impl/ops/CMakeLists.txt: DEFAULT, and on x86-64 AVX2 and AVX512), each copy in
// its own CPU_CAPABILITY namespace; dispatch.h picks the copy for cpu_capability() at each call.
//
// The choice, made once per process:
//   1. CROSSDEV_CPU_CAPABILITY=default|avx2|avx512 when set (the semantics of ATen's
//      ATEN_CPU_CAPABILITY); an unknown value is ignored with a warning, as ATen does;
//   2. else ATen's own choice (at::get_cpu_capability(), which honours ATEN_CPU_CAPABILITY), so
//      the fused kernels and ATen's run the same instruction set unless told otherwise;
//   3. either way, lowered to what this CPU supports and what this build compiled.
// The choice is logged once (category "cpu", level info) and recorded by the benchmarks.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace crossdev::ops::cpu {

// Ordered: a higher value runs on a subset of the machines a lower one runs on.
enum class CpuCapability : int { Default = 0, AVX2 = 1, AVX512 = 2 };
constexpr int kCpuCapabilities = 3;

const char* capability_name(CpuCapability capability) noexcept;  // "default", "avx2", "avx512"
// Case-insensitive; nullopt for anything else.
std::optional<CpuCapability> parse_capability(std::string_view text) noexcept;

// The capability the fused CPU kernels run with (see above); fixed after the first call, except
// through ScopedCpuCapability.
CpuCapability cpu_capability();

struct CpuCapabilityInfo {
  CpuCapability chosen;
  CpuCapability hardware;  // the best this CPU supports
  CpuCapability built;     // the best this build compiled
  std::string source;      // why: "CROSSDEV_CPU_CAPABILITY=avx2", "ATen (AVX512)", ...
};
CpuCapabilityInfo cpu_capability_info();

// The capabilities this process can run (built and supported), lowest first.
std::vector<CpuCapability> available_capabilities();

// Test-only: runs the fused kernels with `capability` (lowered to what is available) until
// destroyed. Not thread-safe with respect to concurrent kernel calls.
class ScopedCpuCapability {
 public:
  explicit ScopedCpuCapability(CpuCapability capability);
  ~ScopedCpuCapability();
  ScopedCpuCapability(const ScopedCpuCapability&) = delete;
  ScopedCpuCapability& operator=(const ScopedCpuCapability&) = delete;

 private:
  int previous_;
};

}  // namespace crossdev::ops::cpu
