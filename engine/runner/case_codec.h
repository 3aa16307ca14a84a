#pragma once
// Line codec for CaseResult, used between `crossdev run` and its isolated worker processes.
// One record per line, fields separated by tabs, with \\, \t and \n escaped; status and execution by their
// names in python/crossdev/case_statuses.json.
#include <optional>
#include <string>

#include "manager/op_log.h"
#include "runner/case_result.h"

namespace crossdev::conformance {

std::string encode_case(const CaseResult& r);
std::optional<CaseResult> decode_case(const std::string& line);  // nullopt on a malformed record
// One field of a record with its escapes undone (backslash + t, n, u, v or backslash); the Python worker writes the same escapes.
std::string unescape_field(const std::string& field);

// Device-operation log entries recorded in a worker travel the same way, so the parent's
// OpLog (and the bundle's device_log summary) covers every isolated row.
std::string encode_oplog(const manager::OpLogEntry& e);
std::optional<manager::OpLogEntry> decode_oplog(const std::string& line);

}  // namespace crossdev::conformance
