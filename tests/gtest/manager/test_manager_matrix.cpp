// One test per row of matrices/manager.yaml and matrices/errors.yaml (named by row id).
#include "matrix_rows.h"

namespace crossdev::testing {
namespace {

class ManagerMatrix : public ::testing::TestWithParam<RowParam> {};
TEST_P(ManagerMatrix, Row) { expect_row_passes(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Manager, ManagerMatrix, ::testing::ValuesIn(rows_of_suite("manager")), row_param_name);

class ErrorsMatrix : public ::testing::TestWithParam<RowParam> {};
TEST_P(ErrorsMatrix, Row) { expect_row_passes(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Errors, ErrorsMatrix, ::testing::ValuesIn(rows_of_suite("errors")), row_param_name);

}  // namespace
}  // namespace crossdev::testing
