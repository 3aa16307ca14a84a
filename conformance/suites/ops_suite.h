#pragma once
// suite: ops — numerical parity of the fused / fallback / TorchScript ops (seed 000) across
// devices and dtypes. Row schema, reference kinds and expectations: docs/parity.md.
//
// Exposed beyond make_ops_suite() (suite_table.h) for the GoogleTest suite and tools.
#include <string>
#include <vector>

#include "runner/matrix_types.h"

namespace crossdev::conformance {

// Every case id a row expands into, "<row id>/<device kind>/<dtype>/<shape set>/<impl>",
// whether or not this host can run it. Throws YamlError for an invalid row.
std::vector<std::string> ops_case_ids(const Row& row);

// "file:line: stale expectation 'glob' (xfail) matches no case of <matrix>" for every entry of
// the matrix folder's expectations/ops/<kind>.yaml files that matches none of the matrix's cases.
std::vector<std::string> stale_expectation_warnings(const MatrixFile& matrix);

}  // namespace crossdev::conformance
