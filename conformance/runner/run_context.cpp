#include "runner/run_context.h"

#include <atomic>

#include "runner/python_runtimes.h"
#include "sim/divergence_switch.h"
#include "sim/sim_backend.h"

namespace crossdev::conformance {
namespace {

std::atomic<ExceptionDescriber> g_describer{nullptr};

// The first device kind other than the CPU that this host really has ("" if none).
std::string real_accelerator(const HostProfile& host) {
  for (DeviceKind kind : kAllDeviceKinds) {
    if (kind != DeviceKind::CPU && host.provenance(kind) == Provenance::Real) return kind_name(kind);
  }
  return "";
}

}  // namespace

PreparedRun prepare_run(const std::string& simulate_spec) {
  sim::diverging_kinds_from_env();  // a bad CROSSDEV_SIM_DIVERGE is bad input before anything runs
  PreparedRun run;
  run.ctx = RunContext{HostProfile::probe_with_simulation(simulate_spec), simulate_spec};
  attach_python_runtimes(run.ctx.host);  // torch_xla's xla, when installed and working (runner/python_runtimes.h)
  const std::string accelerator = real_accelerator(run.ctx.host);
  if (!run.ctx.host.any_simulated()) return run;  // nothing simulated: the process is left as it is
  if (accelerator.empty()) {
    sim::register_backend();  // now, before any row can start autograd
  } else {
    const std::string reason = "this host has a real " + accelerator +
                               ", and registering the sim backend would make PyTorch's autograd engine treat sim "
                               "as the accelerator and break backward on the real " +
                               accelerator;
    run.note = "not simulating (" + simulate_spec + "): " + reason + "; the simulated kinds are not run";
    run.ctx = RunContext{HostProfile::probe(), ""};
    attach_python_runtimes(run.ctx.host);
    run.ctx.not_simulated_reason = reason;
  }
  return run;
}

void set_exception_describer(ExceptionDescriber describer) noexcept { g_describer.store(describer); }

std::string describe_exception(const std::exception& e) {
  const ExceptionDescriber describer = g_describer.load();
  return describer ? describer(e) : std::string(e.what());
}

}  // namespace crossdev::conformance
