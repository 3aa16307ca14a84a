#include "runner/execution_target.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <unistd.h>

#include "sim/divergence_switch.h"

#ifndef CROSSDEV_LIBTORCH_VERSION
#define CROSSDEV_LIBTORCH_VERSION "unknown"
#endif
#ifndef CROSSDEV_CUDA_VERSION
#define CROSSDEV_CUDA_VERSION ""
#endif
#ifndef CROSSDEV_CUDA_KERNELS  // cmake/CrossdevCuda.cmake's CROSSDEV_CUDA_KERNELS
#define CROSSDEV_CUDA_KERNELS ""
#endif

namespace crossdev::conformance {
namespace {

std::string git_commit() {
  if (const char* env = std::getenv("CROSSDEV_GIT_COMMIT"); env && *env) return env;
#ifdef CROSSDEV_SOURCE_DIR
  const std::string cmd = std::string("git -C '") + CROSSDEV_SOURCE_DIR + "' rev-parse HEAD 2>/dev/null";
  if (std::FILE* pipe = ::popen(cmd.c_str(), "r")) {
    std::array<char, 64> buf{};
    std::string out;
    while (std::fgets(buf.data(), buf.size(), pipe)) out += buf.data();
    ::pclose(pipe);
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    if (!out.empty()) return out;
  }
#endif
  return "unknown";
}

}  // namespace

ExecutionTarget describe_execution_target(const HostProfile& host, const std::string& simulate_spec) {
  ExecutionTarget t;
  t.device_kind = "cpu";
  for (DeviceKind kind : kAllDeviceKinds) {  // the first real accelerator, in the kind table's order
    if (kind_info(kind).is_accelerator && host.provenance(kind) == Provenance::Real) {
      t.device_kind = kind_name(kind);
      break;
    }
  }
  const auto& presence = host.presence(*kind_from_name(t.device_kind));
  t.device_model = presence.devices.empty() ? t.device_kind : presence.devices.front().name;
  t.libtorch_version = CROSSDEV_LIBTORCH_VERSION;
  t.cuda_version = CROSSDEV_CUDA_VERSION;
  t.cuda_kernels = CROSSDEV_CUDA_KERNELS;
#if defined(__clang__)
  t.compiler = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  t.compiler = std::string("gcc ") + __VERSION__;
#else
  t.compiler = "unknown";
#endif
  t.git_commit = git_commit();
  char hostname[256] = {};
  t.host = ::gethostname(hostname, sizeof hostname - 1) == 0 ? hostname : "unknown";
  t.simulated = host.any_simulated();
  t.simulate_spec = simulate_spec;
  const std::vector<DeviceKind> diverging = sim::diverging_kinds_from_env();
  for (DeviceKind kind : kAllDeviceKinds)  // in the kind table's order, as `devices`
    if (host.provenance(kind) == Provenance::Simulated && std::find(diverging.begin(), diverging.end(), kind) != diverging.end()) {
      if (!t.sim_diverge.empty()) t.sim_diverge += ',';
      t.sim_diverge += kind_name(kind);
    }
  return t;
}

}  // namespace crossdev::conformance
