#include "runner/runner.h"

#include "runner/interrupt.h"
#include "runner/run_context.h"
#include "util/row_hook.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <thread>

namespace crossdev::conformance {

void RunSummary::add(const CaseResult& r) {
  ++total;
  ++by_status[static_cast<std::size_t>(r.status)];
  ++by_execution[static_cast<std::size_t>(r.execution)];
}

int RunSummary::gating() const {
  int n = 0;
  for (const Status s : kAllStatuses) n += status_gates(s) ? count(s) : 0;
  return n;
}

std::string RunSummary::line() const {
  return "crossdev: " + std::to_string(count(Status::Pass)) + " passed, " + std::to_string(gating()) + " failed, " +
         std::to_string(count(Status::Skip)) + " skipped, " + std::to_string(count(Status::XFail)) + " xfailed (" +
         std::to_string(count(Execution::Real)) + " on real devices, " + std::to_string(count(Execution::Simulated)) +
         " simulated, " + std::to_string(count(Execution::NotRun)) + " not run)";
}

std::vector<CaseResult> run_row(const Suite& suite, const Row& row, const RunContext& ctx) {
  if (const RowHook hook = row_hook()) hook(row.id());  // test-only (util/row_hook.h)
  const auto start = std::chrono::steady_clock::now();
  std::vector<CaseResult> results;
  try {
    results = suite.run(row, ctx);
  } catch (const std::exception& e) {
    CaseResult r = result_for(row, suite);
    r.status = Status::Error;
    r.message = "uncaught exception: " + describe_exception(e);
    results = {r};
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (auto& r : results)
    if (r.duration_s == 0.0) r.duration_s = elapsed / static_cast<double>(results.size());
  return results;
}

std::vector<CaseResult> run_catalog(const std::vector<MatrixFile>& catalog, const RunContext& ctx,
                                    const ResultCallback& on_result) {
  std::vector<CaseResult> all;
  for (const auto& file : catalog) {
    const Suite* suite = find_suite(file.suite);
    for (const auto& row : file.rows) {
      if (stop_signal() != 0) {  // SIGINT/SIGTERM: the rows not yet run are reported, not run
        CaseResult r = interrupted_result(row, *suite);
        if (on_result) on_result(r);
        all.push_back(std::move(r));
        continue;
      }
      for (auto& r : run_row(*suite, row, ctx)) {
        if (on_result) on_result(r);
        all.push_back(std::move(r));
      }
    }
  }
  return all;
}

}  // namespace crossdev::conformance
