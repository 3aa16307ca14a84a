#pragma once
// Applying matrices/expectations files (parity/expectations.h) to the cases of a suite: the ops
// suite (<matrix folder>/expectations/<kind>.yaml) and the opinfo suite
// (<matrix folder>/expectations/opinfo/<kind>.yaml) share these rules (docs/parity.md).
#include <string>

#include "parity/expectations.h"
#include "runner/case_result.h"

namespace crossdev::conformance {

// The file at `path`, read once per process (absent: no expectations). Throws YamlError (exit 2).
const parity::ExpectationFile& cached_expectations(const std::string& path);

// An xfail expectation on a case that ran: a failure (fail, error, crash) becomes xfail, a pass
// becomes xpass (which gates: the expectation is out of date). Records the entry in details.
void apply_xfail(const parity::Expectation& e, CaseResult& r);

}  // namespace crossdev::conformance
