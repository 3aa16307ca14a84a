#include "ops/cpu/capability.h"

#include <ATen/Version.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>

#include "log/logger.h"

// The best capability impl/ops/CMakeLists.txt compiled the fused kernels for.
#ifndef CROSSDEV_CPU_CAPABILITY_BUILT
#define CROSSDEV_CPU_CAPABILITY_BUILT 0
#endif

namespace crossdev::ops::cpu {
namespace {

CpuCapability detect_hardware() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  // The feature sets ATen requires for its AVX512 and AVX2 kernels (the flags each copy is built
  // with); __builtin_cpu_supports also checks that the OS saves the wider registers.
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("fma")) {
    return CpuCapability::AVX512;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c")) {
    return CpuCapability::AVX2;
  }
#endif
  return CpuCapability::Default;
}

CpuCapabilityInfo choose() {
  CpuCapabilityInfo info{CpuCapability::Default, detect_hardware(),
                         static_cast<CpuCapability>(CROSSDEV_CPU_CAPABILITY_BUILT), ""};
  CpuCapability wanted = info.hardware;
  const char* env = std::getenv("CROSSDEV_CPU_CAPABILITY");
  std::optional<CpuCapability> requested = env != nullptr && *env != '\0' ? parse_capability(env) : std::nullopt;
  if (env != nullptr && *env != '\0' && !requested) {
    TORCH_WARN("crossdev: ignoring invalid value for CROSSDEV_CPU_CAPABILITY: '", env,
               "' (expected default, avx2 or avx512)");
  }
  if (requested) {
    wanted = *requested;
    info.source = std::string("CROSSDEV_CPU_CAPABILITY=") + env;
  } else {
    const std::string aten = at::get_cpu_capability();  // "DEFAULT", "AVX2", "AVX512", or another arch's name
    wanted = parse_capability(aten).value_or(CpuCapability::Default);
    info.source = "ATen's choice (" + aten + ")";
  }
  info.chosen = std::min({wanted, info.hardware, info.built});
  if (info.chosen != wanted) {
    info.source += std::string(", lowered to ") + capability_name(info.chosen) + " (this CPU supports " +
                   capability_name(info.hardware) + ", this build has " + capability_name(info.built) + ")";
  }
  Logger::global().log(LogLevel::Info, "cpu",
                       std::string("fused CPU kernels run with ") + capability_name(info.chosen) + ": " + info.source,
                       {{"cpu_capability", capability_name(info.chosen)}});
  return info;
}

const CpuCapabilityInfo& chosen_info() {
  static const CpuCapabilityInfo info = choose();
  return info;
}

std::atomic<int> g_override{-1};

}  // namespace

const char* capability_name(CpuCapability capability) noexcept {
  switch (capability) {
    case CpuCapability::Default:
      return "default";
    case CpuCapability::AVX2:
      return "avx2";
    case CpuCapability::AVX512:
      return "avx512";
  }
  return "default";
}

std::optional<CpuCapability> parse_capability(std::string_view text) noexcept {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (int c = 0; c < kCpuCapabilities; ++c) {
    if (lower == capability_name(static_cast<CpuCapability>(c))) return static_cast<CpuCapability>(c);
  }
  return std::nullopt;
}

CpuCapability cpu_capability() {
  const int forced = g_override.load(std::memory_order_relaxed);
  return forced >= 0 ? static_cast<CpuCapability>(forced) : chosen_info().chosen;
}

CpuCapabilityInfo cpu_capability_info() {
  CpuCapabilityInfo info = chosen_info();
  const int forced = g_override.load(std::memory_order_relaxed);
  if (forced >= 0) {
    info.chosen = static_cast<CpuCapability>(forced);
    info.source = "ScopedCpuCapability (test override)";
  }
  return info;
}

std::vector<CpuCapability> available_capabilities() {
  const CpuCapabilityInfo& info = chosen_info();
  std::vector<CpuCapability> out;
  for (int c = 0; c <= static_cast<int>(std::min(info.hardware, info.built)); ++c) out.push_back(static_cast<CpuCapability>(c));
  return out;
}

ScopedCpuCapability::ScopedCpuCapability(CpuCapability capability) : previous_(g_override.load()) {
  const CpuCapabilityInfo& info = chosen_info();
  g_override.store(static_cast<int>(std::min({capability, info.hardware, info.built})));
}

ScopedCpuCapability::~ScopedCpuCapability() { g_override.store(previous_); }

}  // namespace crossdev::ops::cpu
