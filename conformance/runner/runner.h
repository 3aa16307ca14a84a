#pragma once
// Runs a validated catalog. Each row runs inside a try/catch: an exception becomes an `error`
// case and the run goes on, so nothing already computed is lost.
#include <array>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "runner/matrix_types.h"
#include "runner/case_result.h"
#include "runner/suite.h"

namespace crossdev::conformance {

// Cases counted by status and by execution (case_statuses.json's tables, indexed by enumerator).
struct RunSummary {
  int total = 0;
  std::array<int, std::size(kAllStatuses)> by_status{};
  std::array<int, std::size(kAllExecutions)> by_execution{};
  int count(Status s) const { return by_status[static_cast<std::size_t>(s)]; }
  int count(Execution e) const { return by_execution[static_cast<std::size_t>(e)]; }
  int gating() const;  // cases whose status gates
  bool gates() const { return gating() > 0; }
  void add(const CaseResult& r);
  std::string line() const;  // "crossdev: 120 passed, 0 failed, ..."
};

using ResultCallback = std::function<void(const CaseResult&)>;

std::vector<CaseResult> run_catalog(const std::vector<MatrixFile>& catalog, const RunContext& ctx,
                                    const ResultCallback& on_result = nullptr);

std::vector<CaseResult> run_row(const Suite& suite, const Row& row, const RunContext& ctx);

}  // namespace crossdev::conformance
