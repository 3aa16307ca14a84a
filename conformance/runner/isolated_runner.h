#pragma once
// Crash isolation: each matrix file runs in a worker process (`crossdev run --worker`), which
// announces every row before running it and streams results back over a pipe. If the worker
// dies (a segfaulting kernel, an abort) or a row exceeds the timeout, that row is reported as
// `crash` with the signal or timeout, and a new worker resumes at the next row — the run goes
// on and nothing already computed is lost. (fork() without exec is not an option: LibTorch's
// OpenMP pool does not survive it.)
#include <string>
#include <vector>

#include "runner/runner.h"

namespace crossdev::conformance {

struct IsolationOptions {
  std::string executable;               // this binary (/proc/self/exe)
  std::vector<std::string> extra_args;  // passed to every worker (e.g. --simulate S, --filter G)
  double row_timeout_s = 600;
};

std::vector<CaseResult> run_isolated(const std::vector<MatrixFile>& catalog, const IsolationOptions& options,
                                     const ResultCallback& on_result = nullptr);

// Worker side: runs rows [start_row, end) of `file`, writing its events to fd (runner/worker_events.h):
// `row` (index) before each row, its `case`s and `oplog` entries after it, and `done`. Returns the
// process exit code.
int run_worker(const MatrixFile& file, const RunContext& ctx, std::size_t start_row, int fd);

}  // namespace crossdev::conformance
