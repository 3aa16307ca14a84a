#pragma once
// The host a run executes on, decided once for `crossdev run` and the pytest plugin alike:
// the real probe plus the simulated kinds of the spec, and the sim backend registered before
// anything can start LibTorch's autograd engine (it sizes its per-device queues once, from the
// backends registered at that moment). On a host with a real accelerator nothing is simulated:
// registering the sim backend would make autograd treat sim as the accelerator and break
// backward on the real device (docs/sim-backend.md); `note` then says so.
#include <string>

#include "runner/suite.h"

namespace crossdev::conformance {

struct PreparedRun {
  RunContext ctx;
  std::string note;  // "" unless the simulated kinds were dropped
};

// Throws std::invalid_argument for a malformed spec (naming the item and the grammar).
PreparedRun prepare_run(const std::string& simulate_spec);

}  // namespace crossdev::conformance
