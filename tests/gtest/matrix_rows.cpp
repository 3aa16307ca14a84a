#include "matrix_rows.h"

#include <map>
#include <memory>
#include <set>

#include "runner/catalog.h"
#include "runner/runner.h"
#include "runner/suite.h"

namespace crossdev::testing {
namespace {

struct Catalog {
  std::vector<conformance::MatrixFile> files;
  std::string error;
};

const Catalog& catalog() {
  static const Catalog c = [] {
    Catalog out;
    try {
      out.files = conformance::load_catalog(CROSSDEV_MATRIX_DIR);
    } catch (const std::exception& e) {
      out.error = e.what();
    }
    return out;
  }();
  return c;
}

}  // namespace

std::vector<RowParam> rows_of_suite(const std::string& suite) {
  const Catalog& c = catalog();
  if (!c.error.empty()) return {RowParam{suite, nullptr, c.error}};
  std::vector<RowParam> out;
  for (const auto& file : c.files)
    if (file.suite == suite)
      for (const auto& row : file.rows) out.push_back(RowParam{suite, &row, ""});
  if (out.empty()) out.push_back(RowParam{suite, nullptr, "no rows for suite '" + suite + "' in " CROSSDEV_MATRIX_DIR});
  return out;
}

std::string sanitize_test_name(const std::string& id) {
  std::string out;
  for (char c : id) out += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return out.empty() ? "unnamed" : out;
}

std::string row_param_name(const ::testing::TestParamInfo<RowParam>& info) {
  if (!info.param.row) return "load_error";
  // Row ids are unique, but sanitising can merge two; suffix the index only then.
  static std::map<std::string, std::set<std::string>> used;
  std::string name = sanitize_test_name(info.param.row->id());
  auto& names = used[info.param.suite];
  if (!names.insert(name).second) {
    name += '_';
    name += std::to_string(info.index);
  }
  return name;
}

void expect_row_passes(const RowParam& param) {
  ASSERT_TRUE(param.row) << param.load_error;
  const conformance::Suite* suite = conformance::find_suite(param.suite);
  ASSERT_TRUE(suite) << "unknown suite " << param.suite;
  static const conformance::RunContext ctx{HostProfile::probe_with_simulation(simulate_from_env()), simulate_from_env()};
  const auto results = conformance::run_row(*suite, *param.row, ctx);
  ASSERT_FALSE(results.empty());
  bool all_skipped = true;
  for (const auto& r : results) all_skipped &= r.status == conformance::Status::Skip;
  if (all_skipped) GTEST_SKIP() << results.front().message;  // shown as skipped, never as a pass
  for (const auto& r : results) {
    EXPECT_FALSE(conformance::status_gates(r.status))
        << r.file << ":" << r.line << ": " << r.id << " [" << conformance::status_name(r.status) << ", "
        << conformance::execution_name(r.execution) << "] " << r.message;
    if (r.status == conformance::Status::Skip) std::cout << "[  SKIP    ] " << r.id << ": " << r.message << "\n";
  }
}

}  // namespace crossdev::testing
