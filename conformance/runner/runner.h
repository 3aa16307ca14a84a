#pragma once
// Runs a validated catalog. Each row runs inside a try/catch: an exception becomes an `error`
// case and the run goes on, so nothing already computed is lost.
#include <functional>
#include <string>
#include <vector>

#include "runner/matrix_types.h"
#include "runner/case_result.h"
#include "runner/suite.h"

namespace crossdev::conformance {

struct RunSummary {
  int total = 0, pass = 0, fail = 0, xfail = 0, xpass = 0, skip = 0, error = 0, crash = 0;
  int real = 0, simulated = 0, not_run = 0;
  bool gates() const { return fail + xpass + error + crash > 0; }
  void add(const CaseResult& r);
  std::string line() const;  // "crossdev: 120 passed, 0 failed, ..."
};

using ResultCallback = std::function<void(const CaseResult&)>;

std::vector<CaseResult> run_catalog(const std::vector<MatrixFile>& catalog, const RunContext& ctx,
                                    const ResultCallback& on_result = nullptr);

std::vector<CaseResult> run_row(const Suite& suite, const Row& row, const RunContext& ctx);

}  // namespace crossdev::conformance
