// One test per row of matrices/ops.yaml (named by row id), plus the ops suite's own
// behaviour: row validation errors, expectations (xfail / xpass / skip / stale) and skipping
// of devices the host lacks.
#include <filesystem>
#include <fstream>
#include <iostream>

#include <gtest/gtest.h>


#include <cstdio>

#include "mutants.h"
#include "scratch_dir.h"
#include "matrix_rows.h"
#include "ops/op_spec.h"
#include "runner/catalog.h"
#include "runner/runner.h"
#include "runner/suite.h"
#include "suites/ops_suite.h"

namespace crossdev::testing {
namespace {

using conformance::CaseResult;
using conformance::Execution;
using conformance::Status;

conformance::RunContext this_host() { return {HostProfile::probe_with_simulation(simulate_from_env()), simulate_from_env()}; }
conformance::RunContext cpu_only_host() { return {HostProfile(), ""}; }

// ---- the repository's matrix -------------------------------------------------------------

class OpsMatrix : public ::testing::TestWithParam<RowParam> {};

TEST_P(OpsMatrix, Row) {
  const RowParam& param = GetParam();
  ASSERT_TRUE(param.row) << param.load_error;
  static const conformance::RunContext ctx = this_host();
  const auto results = conformance::run_row(*conformance::find_suite("ops"), *param.row, ctx);
  int ran = 0, skipped = 0, xfailed = 0;
  for (const CaseResult& r : results) {
    EXPECT_FALSE(conformance::status_gates(r.status))
        << r.file << ":" << r.line << ": " << r.id << " [" << conformance::status_name(r.status) << ", "
        << conformance::execution_name(r.execution) << "] " << r.message;
    ran += r.execution != Execution::NotRun;
    skipped += r.status == Status::Skip;
    xfailed += r.status == Status::XFail;
  }
  std::cout << "[  CASES   ] " << param.row->id() << ": " << results.size() << " cases, " << ran << " ran, " << skipped
            << " skipped, " << xfailed << " xfailed\n";
  // Every row lists the CPU, so something must have run: a row that only skips proves nothing.
  EXPECT_GT(ran, 0) << param.row->id() << ": no case ran on this host";
}

INSTANTIATE_TEST_SUITE_P(Seed000, OpsMatrix, ::testing::ValuesIn(rows_of_suite("ops")), row_param_name);

TEST(OpsMatrixFile, CoversEveryOpAndHasNoStaleExpectations) {
  const auto rows = rows_of_suite("ops");
  ASSERT_TRUE(rows.front().row) << rows.front().load_error;
  std::set<std::string> covered;
  for (const RowParam& p : rows) covered.insert(p.row->str("op"));
  for (const ops::OpSpec* op : ops::all_ops()) EXPECT_TRUE(covered.count(op->name())) << "no row for op " << op->name();

  const auto matrix = conformance::load_matrix_file(rows.front().row->file(), &conformance::schema_for_suite);
  const auto warnings = conformance::stale_expectation_warnings(matrix);
  for (const auto& w : warnings) ADD_FAILURE() << w;
}

// ---- the suite on scratch matrices ---------------------------------------------------------

// A throwaway matrix folder: ops.yaml plus expectations/ops/<kind>.yaml files (scratch_dir.h: removed with nftw).
class ScratchMatrix {
 public:
  ScratchMatrix() : dir_(name()) { std::filesystem::create_directories(dir_ / "expectations" / "ops"); }
  std::string write(const std::string& relative, const std::string& text) const {
    const auto path = dir_ / relative;
    std::ofstream(path) << text;
    return path.string();
  }
  std::string matrix(const std::string& rows) const { return write("ops.yaml", "suite: ops\ncases:\n" + rows); }

 private:
  static std::string name() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    return "crossdev_ops_" + std::string(info->test_suite_name()) + "_" + info->name();
  }
  ScratchDir dir_;
};

std::vector<CaseResult> run_file(const std::string& path, const conformance::RunContext& ctx) {
  return conformance::run_catalog(conformance::load_catalog(path), ctx);
}

const CaseResult& find_case(const std::vector<CaseResult>& results, const std::string& id) {
  for (const CaseResult& r : results)
    if (r.id == id) return r;
  throw std::runtime_error("no case " + id);
}

double metric(const CaseResult& r, const std::string& name) {
  for (const auto& [k, v] : r.metrics)
    if (k == name) return v;
  throw std::runtime_error(r.id + ": no metric " + name);
}

constexpr const char* kSmallRow =
    "  - {id: t.modulate, source: test, op: modulate, devices: [cpu], dtypes: [float32], shape_sets: [basic],\n"
    "     impls: [fused, fallback]}\n";

TEST(OpsSuite, ExpandsCaseIdsAndRecordsMetrics) {
  ScratchMatrix m;
  const auto results = run_file(m.matrix(kSmallRow), cpu_only_host());
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].id, "t.modulate/cpu/float32/basic/fused");
  EXPECT_EQ(results[1].id, "t.modulate/cpu/float32/basic/fallback");
  for (const CaseResult& r : results) {
    EXPECT_EQ(r.status, Status::Pass) << r.id << ": " << r.message;
    EXPECT_EQ(r.execution, Execution::Real);
    EXPECT_LE(metric(r, "max_abs"), 1e-5);  // measured, and within float32's atol of the golden
    EXPECT_EQ(metric(r, "mismatches"), 0.0);
  }
  // The fused case is held to the golden and to the fallback; the fallback to the golden only.
  auto detail = [](const CaseResult& r, const std::string& key) {
    for (const auto& [k, v] : r.details)
      if (k == key) return v;
    return std::string();
  };
  EXPECT_EQ(detail(results[0], "references"), "golden,fused_vs_fallback");
  EXPECT_EQ(detail(results[1], "references"), "golden");
  EXPECT_FALSE(detail(results[0], "golden grad.x").empty()) << "backward was not checked";
}

TEST(OpsSuite, DevicesTheHostLacksAreSkippedAndNotRun) {
  ScratchMatrix m;
  const auto results = run_file(
      m.matrix("  - {id: t.absent, source: test, op: modulate, devices: [cpu, mps], dtypes: [float32], shape_sets: [basic], "
               "impls: [fused]}\n"),
      cpu_only_host());
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].status, Status::Pass) << results[0].message;
  EXPECT_EQ(results[1].id, "t.absent/mps/float32/basic/fused");
  EXPECT_EQ(results[1].status, Status::Skip);
  EXPECT_EQ(results[1].execution, Execution::NotRun);
  EXPECT_EQ(results[1].message.rfind("device not present", 0), 0u) << results[1].message;
}

TEST(OpsSuite, XfailExpectationTurnsAPassIntoAGatingXpass) {
  ScratchMatrix m;
  m.write("expectations/ops/cpu.yaml",
          "expectations:\n  - {match: \"t.modulate/cpu/*/fused\", status: xfail, reason: \"known bad\"}\n");
  const auto results = run_file(m.matrix(kSmallRow), cpu_only_host());
  const CaseResult& fused = find_case(results, "t.modulate/cpu/float32/basic/fused");
  EXPECT_EQ(fused.status, Status::XPass) << fused.message;
  EXPECT_TRUE(conformance::status_gates(fused.status));
  EXPECT_NE(fused.message.find("expectations/ops/cpu.yaml:2"), std::string::npos) << fused.message;
  EXPECT_EQ(find_case(results, "t.modulate/cpu/float32/basic/fallback").status, Status::Pass);
}

TEST(OpsSuite, XfailExpectationAbsorbsARealFailure) {
  ScratchMatrix m;
  m.write("expectations/ops/cpu.yaml",
          "expectations:\n  - {match: \"t.modulate/cpu/*/fused\", status: xfail, reason: \"known bad\"}\n");
  struct MutantScope {  // restored even if the run throws, so the mutant never leaks into other tests
    MutantScope() { mutants::set_active_mutant("modulate.wrong_broadcast_axis"); }
    ~MutantScope() { mutants::set_active_mutant(""); }
  };
  const auto results = [&] {
    MutantScope scope;
    return run_file(m.matrix(kSmallRow), cpu_only_host());
  }();
  const CaseResult& fused = find_case(results, "t.modulate/cpu/float32/basic/fused");
  EXPECT_EQ(fused.status, Status::XFail) << fused.message;
  EXPECT_NE(fused.message.find("known bad"), std::string::npos) << fused.message;
}

TEST(OpsSuite, SkipExpectationDoesNotRun) {
  ScratchMatrix m;
  m.write("expectations/ops/cpu.yaml", "expectations:\n  - {match: \"*/fallback\", status: skip, reason: \"too slow here\"}\n");
  const auto results = run_file(m.matrix(kSmallRow), cpu_only_host());
  const CaseResult& fallback = find_case(results, "t.modulate/cpu/float32/basic/fallback");
  EXPECT_EQ(fallback.status, Status::Skip);
  EXPECT_EQ(fallback.execution, Execution::NotRun);
  EXPECT_NE(fallback.message.find("too slow here"), std::string::npos);
}

TEST(OpsSuite, StaleExpectationsAreReported) {
  ScratchMatrix m;
  m.write("expectations/ops/cpu.yaml",
          "expectations:\n"
          "  - {match: \"t.modulate/cpu/*/fused\", status: xfail, reason: used}\n"
          "  - {match: \"t.renamed/*\", status: xfail, reason: stale}\n");
  m.write("expectations/ops/cuda.yaml", "expectations:\n  - {match: \"t.modulate/cuda/*\", status: skip, reason: no row lists cuda}\n");
  const std::string path = m.matrix(kSmallRow);
  const auto matrix = conformance::load_matrix_file(path, &conformance::schema_for_suite);
  const auto warnings = conformance::stale_expectation_warnings(matrix);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("expectations/ops/cpu.yaml:3: stale expectation 't.renamed/*'"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[1].find("expectations/ops/cuda.yaml:2"), std::string::npos) << warnings[1];
}

struct BadRow {
  const char* name;
  const char* row;       // one row, indented under cases:
  int line;              // expected line in the matrix file
  const char* fragment;  // expected part of the message
};

// Line 1 is "suite: ops", line 2 "cases:", so a row starts on line 3.
const BadRow kBadRows[] = {
    {"unknown_op", "  - {id: b, source: t, op: modulte}\n", 3, "unknown op 'modulte'; expected one of "},
    {"unknown_dtype", "  - id: b\n    source: t\n    op: modulate\n    dtypes: [float32, fp8]\n", 6, "unknown entry 'fp8'"},
    {"unknown_shape_set", "  - id: b\n    source: t\n    op: modulate\n    shape_sets: [huge]\n", 6,
     "unknown entry 'huge'; expected one of basic"},
    {"unknown_device", "  - id: b\n    source: t\n    op: modulate\n    devices: [cpu, gpu]\n", 6, "unknown entry 'gpu'"},
    {"unknown_impl", "  - {id: b, source: t, op: modulate, impls: [jit]}\n", 3, "unknown entry 'jit'"},
    {"unknown_check", "  - {id: b, source: t, op: modulate, checks: [sideways]}\n", 3, "unknown check 'sideways'"},
    {"duplicate_dtype", "  - {id: b, source: t, op: modulate, dtypes: [float32, float32]}\n", 3, "duplicate entry"},
    {"tolerance_half_given", "  - id: b\n    source: t\n    op: modulate\n    tolerance: {float16: {rtol: 1e-3}}\n", 6,
     "expected exactly {rtol: <number>, atol: <number>}"},
    {"tolerance_dtype", "  - id: b\n    source: t\n    op: modulate\n    tolerance: {half: {rtol: 1, atol: 1}}\n", 6,
     "unknown dtype 'half'"},
    {"dropout_without_training", "  - {id: b, source: t, op: bias_dropout_add_scale, checks: [dropout], p: 0.1}\n", 3,
     "needs 'training: true'"},
    {"dropout_p_zero", "  - {id: b, source: t, op: bias_dropout_add_scale, checks: [dropout], p: 0, training: true}\n", 3,
     "strictly between 0 and 1"},
    {"p_out_of_range", "  - {id: b, source: t, op: bias_dropout_add_scale, p: 1.5}\n", 3, "probability in [0, 1]"},
    {"unknown_key", "  - {id: b, source: t, op: modulate, dtype: float32}\n", 3, "unknown key 'dtype'"},
};

class OpsSuiteRejects : public ::testing::TestWithParam<BadRow> {};

TEST_P(OpsSuiteRejects, WithFileLineAndExpectation) {
  ScratchMatrix m;
  const std::string path = m.matrix(GetParam().row);
  try {
    conformance::load_catalog(path);
    FAIL() << "accepted:\n" << GetParam().row;
  } catch (const YamlError& e) {
    EXPECT_EQ(e.where().file, path);
    EXPECT_EQ(e.where().line, GetParam().line) << e.what();
    EXPECT_NE(std::string(e.what()).find(GetParam().fragment), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(BadRows, OpsSuiteRejects, ::testing::ValuesIn(kBadRows),
                         [](const ::testing::TestParamInfo<BadRow>& info) { return std::string(info.param.name); });

TEST(OpsSuite, ExpectationFileErrorsSurfaceAtLoadWithFileLine) {
  ScratchMatrix m;
  const std::string expectations = m.write("expectations/ops/cpu.yaml", "expectations:\n  - {match: x, status: maybe, reason: r}\n");
  try {
    conformance::load_catalog(m.matrix(kSmallRow));
    FAIL() << "accepted a bad expectations file";
  } catch (const YamlError& e) {
    EXPECT_EQ(e.where().file, expectations);
    EXPECT_EQ(e.where().line, 2);
    EXPECT_NE(std::string(e.what()).find("expected xfail or skip"), std::string::npos) << e.what();
  }
}

TEST(OpsSuite, AnExpectationFileInTheOldLayoutIsRefusedNamingTheNewPlace) {
  ScratchMatrix m;  // before one layout for every suite, the ops suite's files were expectations/<kind>.yaml
  const std::string old_file = m.write("expectations/cpu.yaml", "expectations:\n  - {match: x, status: skip, reason: r}\n");
  try {
    conformance::load_catalog(m.matrix(kSmallRow));
    FAIL() << "an ops expectation file where nothing reads it any more was accepted";
  } catch (const YamlError& e) {
    EXPECT_EQ(e.where().file, old_file);
    EXPECT_NE(std::string(e.what()).find("expectations/ops/cpu.yaml"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("move this file there"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace crossdev::testing
