// One test per row of the redirect and context matrices (named by row id).
#include "matrix_rows.h"

namespace crossdev::testing {
namespace {

class RedirectMatrix : public ::testing::TestWithParam<RowParam> {};
TEST_P(RedirectMatrix, Row) { expect_row_passes(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Seed002, RedirectMatrix, ::testing::ValuesIn(rows_of_suite("redirect")), row_param_name);

class ContextMatrix : public ::testing::TestWithParam<RowParam> {};
TEST_P(ContextMatrix, Row) { expect_row_passes(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Seeds001And004, ContextMatrix, ::testing::ValuesIn(rows_of_suite("context")), row_param_name);

}  // namespace
}  // namespace crossdev::testing
