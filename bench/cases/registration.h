#pragma once
// Turns the rows of matrices/bench/bench.yaml into Google Benchmark cases (RegisterBenchmark),
// one function per row kind. Names are "/"-separated fields so reports and the gate can split
// them: op/impl/dtype/size/device/pass, policy/resolve/<row id>, bandwidth/<method>/<device>.
#include <map>
#include <string>
#include <vector>

#include "device/host_profile.h"
#include "spec/bench_matrix.h"
#include "probes/bandwidth.h"

namespace crossdev::bench {

struct RegistrationContext {
  Profile profile = Profile::Default;
  const HostProfile* host = nullptr;                              // the real probe: devices we can run
  const std::map<std::string, BandwidthMeasurement>* peaks = nullptr;  // by device ("cpu", "cuda:0")
  std::vector<std::string>* not_run = nullptr;                    // "op.modulate: cuda (not on this host)"
  std::int64_t triad_min_elements = 0;
};

// Whether a row of this profile runs under the selected profile (long includes default).
bool profile_selected(Profile row, Profile selected) noexcept;

// The devices of `kinds` this host really has (index 0 of each); the others go to ctx.not_run.
std::vector<c10::Device> runnable_devices(const std::vector<DeviceKind>& kinds, const std::string& row_id,
                                          const RegistrationContext& ctx);

void register_op_row(const OpRow& row, const RegistrationContext& ctx);
void register_resolve_row(const ResolveRow& row, const RegistrationContext& ctx);
void register_bandwidth_row(const BandwidthRow& row, const RegistrationContext& ctx);

// Every row of the matrix whose profile is selected; returns the number of cases registered.
int register_matrix(const BenchMatrix& matrix, const RegistrationContext& ctx);

}  // namespace crossdev::bench
