#pragma once
// The one vocabulary of the engine's workers (docs/python-worker.md): every record a worker writes is an
// event, one JSON object per line, {"event": <name>, <field>: <value>, ...}, as pytest-xdist's
// sendevent(name, **kw). Statuses and executions travel by their names (python/crossdev/case_statuses.json),
// never as ordinals. Numbers follow Python's json dialect, so a NaN metric stays NaN.
//
// The isolation worker (runner/isolated_runner.h) writes `row`, `case`, `oplog` and `done`; the Python
// worker (crossdev/worker.py) writes `plan`, `start`, `case`, `item`, `bad`, `runtime`, `fatal` and `done`.
#include <optional>
#include <string>
#include <string_view>

#include "manager/op_log.h"
#include "runner/case_result.h"
#include "util/json_value.h"

namespace crossdev::conformance {

struct WorkerEvent {
  std::string name;  // the `event` member: "case", "done", ...
  json::Value body;  // the whole object
  std::string line;  // its text, which body's offsets point into
  // A member's text as written (an object passed on verbatim); "" when missing.
  std::string text_of(std::string_view key) const;
  long index_or(std::string_view key, long when_absent) const;  // an integer member (`index`, `count`, `row`)
};

// The event on one line; nullopt for a line that is not a JSON object with a string `event`.
std::optional<WorkerEvent> read_event(const std::string& line);

// {"event":"<name>"} alone (done), or with one integer member (row, plan).
std::string event_line(std::string_view name);
std::string event_line(std::string_view name, std::string_view key, long value);

// A case result: every CaseResult field by name; `data` (a JSON object) passed through verbatim.
std::string case_event(const CaseResult& r);
// The case an event carries; nullopt when it is no `case` event. A case event that lacks an `id`, names an
// unknown status or execution, or has a `data` that is not an object (it is written verbatim into the bundle) is
// that case's `error`, naming what was wrong (unresolved_case).
std::optional<CaseResult> case_from(const WorkerEvent& e);
// An event the engine cannot read, as a case: `error`, not run, its message "unresolved: <what>" (lit's
// UNRESOLVED), details.malformed_event `malformed`; never a dropped event. Its id is ""; the caller names it.
CaseResult unresolved_case(const std::string& what, const std::string& malformed);
// An event whose name is none of the events its reader expects (`expected`: "row, case, oplog and done").
CaseResult unknown_event_case(const WorkerEvent& e, std::string_view expected);

// Device-operation log entries recorded in a worker travel the same way, so the parent's OpLog (and the
// bundle's device_log summary) covers every isolated row.
std::string oplog_event(const manager::OpLogEntry& entry);
std::optional<manager::OpLogEntry> oplog_from(const WorkerEvent& e);

}  // namespace crossdev::conformance
