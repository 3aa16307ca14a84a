#pragma once
// The host a run executes on, decided once for `crossdev run`, the pytest plugin and
// `crossdev.run_matrix` alike: the real probe plus the simulated kinds of the spec.
//
// The process is changed only when the run simulates: the sim backend (PrivateUse1, named
// "sim") is registered exactly when the spec names a kind this host lacks, and then before
// anything can start LibTorch's autograd engine (it sizes its per-device queues once, from the
// backends registered at that moment). A run that simulates nothing registers nothing, so
// `torch.accelerator.current_accelerator()` and the PrivateUse1 name stay what they were; the
// cases of kinds the host lacks are then not_run with the reason, as for any absent device.
// On a host with a real accelerator nothing is simulated: registering the sim backend would
// make autograd treat sim as the accelerator and break backward on the real device
// (docs/sim-backend.md); `note` then says so.
#include <exception>
#include <string>

#include "runner/suite.h"

namespace crossdev::conformance {

struct PreparedRun {
  RunContext ctx;
  std::string note;  // "" unless the simulated kinds were dropped
};

// Throws std::invalid_argument for a malformed spec (naming the item and the grammar).
PreparedRun prepare_run(const std::string& simulate_spec);

// The message of an exception a row raised, for its `error` case: e.what(), unless the process
// installed a describer. The Python module (python/bindings/harness.cpp) installs one: a user's
// Python op (torch.library.custom_op) that raises inside a row reaches C++ as torch's
// python_error, whose what() is empty and whose Python error is still pending on the thread
// (the next Python call would then fail with SystemError); the describer takes the pending
// error, clears it, and answers "ValueError: <message>". A describer never throws.
using ExceptionDescriber = std::string (*)(const std::exception& e);
void set_exception_describer(ExceptionDescriber describer) noexcept;
std::string describe_exception(const std::exception& e);

}  // namespace crossdev::conformance
