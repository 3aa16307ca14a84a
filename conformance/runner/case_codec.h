#pragma once
// Line codec for CaseResult, used between `crossdev run` and its isolated worker processes.
// One record per line, fields separated by tabs, with \\, \t and \n escaped.
#include <optional>
#include <string>

#include "runner/case_result.h"

namespace crossdev::conformance {

std::string encode_case(const CaseResult& r);
std::optional<CaseResult> decode_case(const std::string& line);  // nullopt on a malformed record

}  // namespace crossdev::conformance
