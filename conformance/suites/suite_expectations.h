#pragma once
// The stale expectations of every suite whose record allows an expectation file (python_suites.json's
// `expectations`: opinfo, models): which entries of <matrix folder>/expectations/<suite>/<kind>.yaml
// (suites/expectation_files.h, docs/opinfo.md "Expectations") a run found matching no case.
#include <set>
#include <string>
#include <vector>

#include "parity/expectations.h"
#include "runner/bundle_writer.h"
#include "runner/case_result.h"
#include "runner/matrix_types.h"
#include "runner/suite.h"

namespace crossdev::conformance {

// The entries that match no case of this run, judged only where the run covered their whole scope:
//   - every matrix file (*.yaml, *.yml) of the expectation file's folder was run with all its rows
//     (`whole_files`: the files --filter took no row from), and not interrupted;
//   - every row of that suite in that folder ran to its end (no row-level crash, error or not_run, whose
//     case id is the row id: a worker that died or timed out between cases);
//   - the entry applies on this host: its kind runs here, real or simulated as the entry says.
// A partial run (--filter, a row that did not finish) judges nothing in that folder. An unsharded run's
// unmatched entries are stale; a shard's (ctx.shard_count > 1) are only unmatched within its ops: the
// bundle's `shard_unmatched_expectations`, and an entry is stale when every shard of the run lists it
// (python/crossdev/report/shards.py folds them).
std::vector<StaleExpectation> unmatched_expectations(const std::vector<MatrixFile>& run,
                                                     const std::set<std::string>& whole_files,
                                                     const std::vector<CaseResult>& results, const RunContext& ctx,
                                                     bool interrupted);

// "file:line: stale expectation 'match' (xfail, kind mps) matches no case of this run, which ran every
// <suite> row of its folder: remove it (`crossdev expectations accept` drops it)".
std::string describe_stale(const StaleExpectation& s);

}  // namespace crossdev::conformance
