#pragma once
// The engine's side of the rows of a suite defined in Python (opinfo, models, claims): plan, check and
// run a row through a PythonWorker (runner/python_worker.h; every request starts with its
// write_process_setup) and turn its events (runner/worker_events.h) into planned cases, bad-input errors and cases.
//
//   - plan and run go to the process's one waiting worker (the session's), which serves every row of
//     the process in turn: a device's runtime, torch and op_db start once, not once per row;
//   - run: one case per `case` event; when the worker dies (a segfaulting kernel) or a case exceeds
//     `case_timeout_s`, the case of the last `start` is a `crash` and a new worker resumes at the
//     next case; a `fatal` event is one `error` case naming it;
//   - check: a one-shot worker of its own (its light import path sets nothing up); each `bad` event is a YamlError at the row's key (file:line, exit 2).
#include <functional>
#include <string>
#include <vector>

#include "runner/python_worker.h"
#include "runner/suite.h"
#include "util/json.h"

namespace crossdev::conformance {

// Ends the session's worker (kill: SIGKILL, else it exits at the end of its requests) and says how it
// ended ("" for exit 0, runner/python_worker.h finish). The next plan or run request starts a new one.
std::string end_session_worker(bool kill);

// The row's "kinds" field: each device kind of the row's `devices` -> real | simulated | absent.
void write_worker_kinds(json::Writer& w, const Row& row, const RunContext& ctx);

// The cases of one row from a "plan" request's `item` events; `fatal` is a YamlError at fatal_key.
std::vector<PlannedCase> plan_python_row(const std::string& request, const Row& row, const char* fatal_key);

// A "check" request over rows: the `bad` events are one YamlError at the first one's row and key,
// every other one a further "file:line: ..." line of its message; `fatal` at the first row's fatal_key.
void check_python_rows(const std::string& request, const std::vector<const Row*>& rows, const char* fatal_key);

// Runs one row: request_for(start, "") is the "run" request resuming at case index `start`. When
// `records_crashes`, a case whose worker died (not one that timed out) is run once more alone,
// request_for(index, FILE), and the details the worker wrote to FILE before the call that killed it
// ({"details": {...}}: the sample it died on) join the crash case (python_suite_table.h).
using RunRequestFor = std::function<std::string(long start, const std::string& crash_record)>;
std::vector<CaseResult> run_python_row(const Row& row, const Suite& suite, const RunRequestFor& request_for,
                                       double case_timeout_s, bool records_crashes = false);

}  // namespace crossdev::conformance
