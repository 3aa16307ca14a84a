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
  };
  std::vector<std::unique_ptr<Suite>> out;
  for (Factory make : kFactories) out.push_back(make());
  // Then the suites defined in Python (opinfo, models, claims), one record each: python_suites.json.
  for (auto& suite : make_python_suites()) out.push_back(std::move(suite));
  return out;
}

}  // namespace crossdev::conformance
