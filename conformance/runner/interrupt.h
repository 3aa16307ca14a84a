#pragma once
// SIGINT / SIGTERM during `crossdev run`: the first one asks the run to stop (the handler only
// records the signal and wakes the runner through a self-pipe); the runner kills its worker,
// reports every row that did not finish as not_run ("interrupted"), the bundle is written, and
// the process exits 128 + signal (130 / 143). A second signal has the default effect.
#include <string>
#include <vector>

#include "runner/matrix_types.h"
#include "runner/case_result.h"
#include "runner/suite.h"

namespace crossdev::conformance {

void install_stop_handlers();  // idempotent
int stop_signal() noexcept;     // 0, or the signal that asked the run to stop
int stop_fd() noexcept;         // readable once a stop signal arrived; -1 before install

// The case reported for a row that was not run because the run was interrupted.
CaseResult interrupted_result(const Row& row, const Suite& suite);

}  // namespace crossdev::conformance
