#pragma once
// Expectation files (parity/expectations.h, docs/parity.md "Expectations"): one layout for every suite
// that takes them, <matrix folder>/expectations/<suite>/<kind>.yaml, read once per process, and the one
// place their entries are applied to cases: the ops suite (suites/ops_suite.cpp) and the Python suites
// (suites/python_suite.cpp: opinfo, models).
#include <cstddef>
#include <string>

#include "parity/expectations.h"
#include "runner/case_result.h"
#include "runner/matrix_types.h"
#include "runner/suite.h"

namespace crossdev::conformance {

// <matrix folder>/expectations/<suite>/<kind>.yaml
std::string expectations_path(const std::string& matrix_file, const std::string& suite, const std::string& kind);

// The file at `path`, read once per process (absent: no expectations). Throws YamlError (exit 2).
const parity::ExpectationFile& cached_expectations(const std::string& path);

// "real" or "simulated" when the kind runs on this host, else "" (its cases are skipped unrun).
std::string execution_of(const RunContext& ctx, const std::string& kind);

// The device kind of a case id: its segment `kind_segment` after the row id ("<row>/<op>/<kind>/..." is
// segment 2), "" if it has none; the CPU-capability axis's "cpu@avx2" is the kind cpu.
std::string kind_of_case(const std::string& row_id, const std::string& id, std::size_t kind_segment);

// The entry of `suite`'s file that applies to case `id` of `row` on this host, or nullptr.
const parity::Expectation* expectation_for(const Row& row, const std::string& suite, std::size_t kind_segment,
                                           const RunContext& ctx, const std::string& id);

// An xfail expectation on a case that ran: a failure (fail, error, crash) becomes xfail, a pass
// becomes xpass (which gates: the expectation is out of date). Records the entry in details.
void apply_xfail(const parity::Expectation& e, CaseResult& r);

}  // namespace crossdev::conformance
