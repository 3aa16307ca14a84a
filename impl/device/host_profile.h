#pragma once
// What devices a host has: a real probe through LibTorch, or a simulated profile
// (`--simulate "cuda:2,mps"` / CROSSDEV_SIMULATE). Every simulated kind carries the flag,
// and a real device always takes precedence over a simulated one of the same kind.
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "device/device_kind.h"

namespace crossdev {

enum class Provenance : std::uint8_t { Absent, Real, Simulated };
const char* provenance_name(Provenance p) noexcept;

struct DeviceProperties {
  std::string name;
  long long total_memory = -1;     // bytes; -1 where unknown
  int major = -1, minor = -1;      // compute capability (or the masquerade's, seed 002)
  int multiprocessor_count = -1;
};

struct KindPresence {
  int count = 0;
  Provenance provenance = Provenance::Absent;
  std::vector<DeviceProperties> devices;  // may be shorter than count where properties are unknown
};

class HostProfile {
 public:
  // CPU present, nothing else.
  HostProfile();

  // Probe this host through LibTorch (at::hasCUDA / device counts / MPS / XPU; XLA is never
  // linked into LibTorch, so it is only ever simulated).
  static HostProfile probe();

  // A purely hypothetical host built from a spec, every accelerator simulated. Used by matrix rows.
  static HostProfile hypothetical(std::string_view spec);

  // The real probe plus simulated kinds from `spec`; kinds the probe found stay real.
  static HostProfile probe_with_simulation(std::string_view spec);

  // Matrix host names (cpu-only, cuda-x1, cuda-x2, mps, xpu, tpu, cuda+mps, ...) or a raw spec.
  static HostProfile named_or_spec(std::string_view name_or_spec);

  int count(DeviceKind kind) const noexcept { return kinds_[kind_slot(kind)].count; }
  bool has(DeviceKind kind) const noexcept { return count(kind) > 0; }
  Provenance provenance(DeviceKind kind) const noexcept { return kinds_[kind_slot(kind)].provenance; }
  const KindPresence& presence(DeviceKind kind) const noexcept { return kinds_[kind_slot(kind)]; }
  bool any_simulated() const noexcept;
  const std::string& source() const noexcept { return source_; }  // "probe", "simulate:cuda:2,mps", ...

  void set(DeviceKind kind, int count, Provenance provenance, std::vector<DeviceProperties> devices = {});

  std::string summary() const;  // "cpu x1 (real), cuda x2 (simulated)"

 private:
  std::array<KindPresence, kNumDeviceKinds> kinds_{};
  std::string source_ = "none";
};

// "cpu-only, cuda-x1, ...": the host names matrices may use instead of a raw spec.
const std::string& named_host_list();

// Parses "cuda:2,mps,tpu:8". Throws std::invalid_argument naming the bad item and the grammar.
struct SimulatedKind {
  DeviceKind kind;
  int count;
};
std::vector<SimulatedKind> parse_simulate_spec(std::string_view spec);

// Properties a simulated device reports (seed 002's masquerade: CUDA-shaped fields for any kind).
DeviceProperties simulated_properties(DeviceKind kind, int index);

// The value of CROSSDEV_SIMULATE, or "" when unset.
std::string simulate_from_env();

}  // namespace crossdev
