#include "runner/suite_table.h"

namespace crossdev::conformance {

std::vector<std::unique_ptr<Suite>> builtin_suites() {
  using Factory = std::unique_ptr<Suite> (*)();
  static constexpr Factory kFactories[] = {
      make_redirect_suite,  // matrices/redirect_{table,points,presets}.yaml: seed 002 policy table, presets, env
      make_context_suite,   // matrices/context.yaml: seeds 001/004 contexts and limits
      make_ops_suite,       // matrices/ops.yaml: seed 000 op parity (fused / fallback / torchscript)
      make_manager_suite,   // matrices/manager.yaml: device managers, capabilities, memory, streams (seeds 001-004)
      make_errors_suite,    // matrices/errors.yaml: error classification and device_safe recovery (seed 003)
      make_opinfo_suite,    // matrices/opinfo/*.yaml: torch's OpInfo database on a device vs the CPU (Python worker)
      make_models_suite,    // matrices/models/*.yaml: a model on a device vs the CPU golden, culprit localised (Python worker)
      make_claims_suite,    // matrices/claims.yaml: a seed's claims about a device's runtime, observed on it (Python worker)
  };
  std::vector<std::unique_ptr<Suite>> out;
  for (Factory make : kFactories) out.push_back(make());
  return out;
}

}  // namespace crossdev::conformance
