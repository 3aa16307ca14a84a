#pragma once
// Shared helper for "one TEST_P per matrix row" suites: loads every matrix of a suite from
// matrices/ and names each test after its row id (sanitised for GoogleTest).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runner/matrix_types.h"

namespace crossdev::testing {

struct RowParam {
  std::string suite;
  const conformance::Row* row = nullptr;  // null when loading failed
  std::string load_error;                 // "file:line: ..." when loading failed
};

// All rows of `suite` across the catalog in CROSSDEV_MATRIX_DIR. Never throws: a load error
// becomes a single parameter whose test fails with the message.
std::vector<RowParam> rows_of_suite(const std::string& suite);

std::string sanitize_test_name(const std::string& id);
std::string row_param_name(const ::testing::TestParamInfo<RowParam>& info);

// Runs the row through its suite on this host and reports every non-passing case.
void expect_row_passes(const RowParam& param);

}  // namespace crossdev::testing
