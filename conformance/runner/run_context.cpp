#include "runner/run_context.h"

#include "sim/sim_backend.h"

namespace crossdev::conformance {
namespace {

// The first device kind other than the CPU that this host really has ("" if none).
std::string real_accelerator(const HostProfile& host) {
  for (DeviceKind kind : kAllDeviceKinds) {
    if (kind != DeviceKind::CPU && host.provenance(kind) == Provenance::Real) return kind_name(kind);
  }
  return "";
}

}  // namespace

PreparedRun prepare_run(const std::string& simulate_spec) {
  PreparedRun run{RunContext{HostProfile::probe_with_simulation(simulate_spec), simulate_spec}, ""};
  const std::string accelerator = real_accelerator(run.ctx.host);
  if (accelerator.empty()) {
    sim::register_backend();
  } else if (run.ctx.host.any_simulated()) {
    run.note = "not simulating (" + simulate_spec + "): this host has a real " + accelerator +
               ", and registering the sim backend would make PyTorch's autograd engine treat sim as the "
               "accelerator and break backward on the real " +
               accelerator + "; the simulated kinds are not run";
    run.ctx = RunContext{HostProfile::probe(), ""};
  }
  return run;
}

}  // namespace crossdev::conformance
