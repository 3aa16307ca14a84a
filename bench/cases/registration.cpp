#include "cases/registration.h"

#include <benchmark/benchmark.h>

namespace crossdev::bench {

bool profile_selected(Profile row, Profile selected) noexcept {
  return row == Profile::Default || selected == Profile::Long;
}

std::vector<c10::Device> runnable_devices(const std::vector<DeviceKind>& kinds, const std::string& row_id,
                                          const RegistrationContext& ctx) {
  std::vector<c10::Device> devices;
  for (DeviceKind kind : kinds) {
    // Never benchmark a simulated device: its numbers would be the CPU's under another name.
    if (kind == DeviceKind::CPU || ctx.host->provenance(kind) == Provenance::Real) {
      devices.emplace_back(kind_info(kind).c10_type, kind == DeviceKind::CPU ? -1 : 0);
    } else if (ctx.not_run) {
      ctx.not_run->push_back(row_id + ": " + kind_name(kind) + " (not on this host)");
    }
  }
  return devices;
}

int register_matrix(const BenchMatrix& matrix, const RegistrationContext& ctx) {
  int before = 0;
  // Google Benchmark has no count of registered cases; count what each row adds instead.
  auto count = [&](const RowHeader& header) { return profile_selected(header.profile, ctx.profile) ? 1 : 0; };
  for (const BandwidthRow& row : matrix.bandwidth) {
    if (count(row.header)) register_bandwidth_row(row, ctx), ++before;
  }
  for (const OpRow& row : matrix.ops) {
    if (count(row.header)) register_op_row(row, ctx), ++before;
  }
  for (const ResolveRow& row : matrix.resolves) {
    if (count(row.header)) register_resolve_row(row, ctx), ++before;
  }
  return before;
}

}  // namespace crossdev::bench
