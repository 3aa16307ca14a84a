// docs/ARCHITECTURE.md's recipe "Add a Python suite", followed with a throwaway: one record (the JSON a
// python_suites.json entry holds) and one Python module, no C++. The engine's one shim makes it a Suite
// whose rows are checked by their keys' types, checked again by the module (a bad row is file:line),
// planned and run by the real Python worker, and whose expectation file, expectations/<suite>/<kind>.yaml,
// turns a failure into xfail.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "runner/python_rows.h"
#include "runner/python_suite_table.h"
#include "runner/suite.h"
#include "scratch_dir.h"

namespace crossdev::conformance {
namespace {

using crossdev::testing::ScratchDir;

constexpr const char* kRecord = R"json({"suites": [{
  "name": "recipe", "doc": "-", "summary": "a throwaway suite", "run_module": "recipe_suite_module", "check_module": "",
  "bad_row_key": "word", "planned_by": "worker", "case_id": ["row", "kind"], "expectations": ["xfail"],
  "shards_its_cases": false,
  "keys": [
    {"key": "word", "type": "string", "required": true, "to_worker": true},
    {"key": "devices", "type": "device_kinds", "required": true, "to_worker": true},
    {"key": "repeat", "type": "count", "to_worker": true, "default": 1, "expected": "an integer >= 1 (how often)"}
  ]}]})json";

// The suite's module: check(request, out), plan_cases(request, out), run(request, out) (docs/python-worker.md).
constexpr const char* kModule = R"py(import os

def check(request, out):
    for i, row in enumerate(request["rows"]):
        if row["word"] == "unspeakable":
            out.bad(i, "word", "the module refuses this word")

def plan_cases(request, out):
    row = request["row"]
    out.plan(len(row["devices"]))
    for i, kind in enumerate(row["devices"]):
        out.item(i, row["id"] + "/" + kind, kind)

def run(request, out):
    row = request["row"]
    out.plan(len(row["devices"]))
    for i, kind in enumerate(row["devices"]):
        if i < request["start"]:
            continue
        case_id = row["id"] + "/" + kind
        out.start(i, case_id)
        status = "pass" if row["word"] == "good" else "fail"
        out.case({"id": case_id, "status": status, "device": kind + ":0", "execution": "real",
                  "message": "word " + row["word"] + " from worker " + str(os.getpid())})
)py";

class PythonSuiteRecipe : public ::testing::Test {
 protected:
  void SetUp() override {
    write("recipe_suite_module.py", kModule);
    const char* old = std::getenv("PYTHONPATH");
    old_pythonpath_ = old ? old : "";
    had_pythonpath_ = old != nullptr;
    ::setenv("PYTHONPATH", (dir_.path().string() + (old ? ":" + old_pythonpath_ : "")).c_str(), 1);
    specs_ = parse_python_suite_specs(kRecord);
    suite_ = make_python_suite(specs_.front());
    schema_ = &suite_->schema();
  }
  void TearDown() override {
    end_session_worker(true);
    if (had_pythonpath_) ::setenv("PYTHONPATH", old_pythonpath_.c_str(), 1); else ::unsetenv("PYTHONPATH");
  }

  std::string write(const std::string& relative, const std::string& text) {
    const auto path = dir_ / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
    return path.string();
  }

  MatrixFile load(const std::string& rows) {
    static const SuiteSchema* schema = nullptr;
    schema = schema_;
    const std::string path = write("recipe.yaml", "suite: recipe\ncases:\n" + rows);
    MatrixFile file = load_matrix_file(path, [](const std::string& name) { return name == "recipe" ? schema : nullptr; });
    for (const Row& row : file.rows) suite_->validate(row);
    return file;
  }

  static RunContext cpu_host() { return {HostProfile(), ""}; }

  // One folder per test: expectation files are read once per process, by path.
  ScratchDir dir_{std::string("crossdev_recipe_") + ::testing::UnitTest::GetInstance()->current_test_info()->name()};
  std::vector<PythonSuiteSpec> specs_;
  std::unique_ptr<Suite> suite_;
  const SuiteSchema* schema_ = nullptr;
  std::string old_pythonpath_;
  bool had_pythonpath_ = false;
};

TEST_F(PythonSuiteRecipe, ItsRecordIsItsSchemaAndItsKeyTypesCheckTheValues) {
  EXPECT_EQ(schema_->required, (std::vector<std::string>{"word", "devices"}));
  EXPECT_EQ(schema_->optional, (std::vector<std::string>{"repeat"}));
  try {
    load("  - {id: r.zero, source: s, word: good, devices: [cpu], repeat: 0}\n");
    FAIL() << "repeat: 0 was accepted";
  } catch (const YamlError& e) {
    EXPECT_EQ(e.where().line, 3);
    EXPECT_NE(std::string(e.what()).find("key 'repeat': expected an integer >= 1 (how often)"), std::string::npos) << e.what();
  }
  try {
    load("  - {id: r.kind, source: s, word: good, devices: [gpu]}\n");
    FAIL() << "an unknown device kind was accepted";
  } catch (const YamlError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown device kind 'gpu'"), std::string::npos) << e.what();
  }
}

TEST_F(PythonSuiteRecipe, ItsModuleChecksPlansAndRunsItsRowsInOneWorkerAndItsExpectationsApply) {
  write("expectations/recipe/cpu.yaml", "expectations:\n  - {match: \"r.bad/*\", status: xfail, reason: \"a known difference\"}\n");
  const MatrixFile file = load(
      "  - {id: r.good, source: s, word: good, devices: [cpu]}\n"
      "  - {id: r.bad, source: s, word: bad, devices: [cpu]}\n"
      "  - {id: r.also, source: s, word: bad, devices: [cpu]}\n");
  const RunContext ctx = cpu_host();
  std::vector<const Row*> rows;
  for (const Row& row : file.rows) rows.push_back(&row);
  suite_->check_rows(rows, ctx);  // nothing the module refuses

  const auto planned = suite_->plan(file.rows[1], ctx);
  ASSERT_EQ(planned.size(), 1u);
  EXPECT_EQ(planned[0].id, "r.bad/cpu");
  EXPECT_EQ(planned[0].expected, "xfail");
  EXPECT_NE(planned[0].where.find("expectations/recipe/cpu.yaml:2"), std::string::npos) << planned[0].where;

  const auto good = suite_->run(file.rows[0], ctx);
  const auto bad = suite_->run(file.rows[1], ctx);
  const auto also = suite_->run(file.rows[2], ctx);
  ASSERT_EQ(good.size(), 1u);
  ASSERT_EQ(bad.size(), 1u);
  ASSERT_EQ(also.size(), 1u);
  EXPECT_EQ(good[0].status, Status::Pass) << good[0].message;
  EXPECT_EQ(good[0].suite, "recipe");
  EXPECT_EQ(good[0].device, "cpu:0");
  EXPECT_EQ(bad[0].status, Status::XFail) << bad[0].message;
  EXPECT_EQ(also[0].status, Status::Fail) << "no entry names r.also: its failure gates";
  const auto worker_of = [](const CaseResult& r) { return r.message.substr(r.message.rfind(' ') + 1); };
  EXPECT_EQ(worker_of(good[0]), worker_of(also[0])) << "one worker served every row";
}

TEST_F(PythonSuiteRecipe, WhatItsModuleRefusesIsBadInputAtTheRowsKey) {
  const MatrixFile file = load("  - {id: r.ok, source: s, word: good, devices: [cpu]}\n"
                               "  - {id: r.no, source: s,\n     word: unspeakable, devices: [cpu]}\n");
  std::vector<const Row*> rows;
  for (const Row& row : file.rows) rows.push_back(&row);
  try {
    suite_->check_rows(rows, cpu_host());
    FAIL() << "the module's refusal was not bad input";
  } catch (const YamlError& e) {
    EXPECT_EQ(e.where().line, 5) << e.what();
    EXPECT_NE(std::string(e.what()).find("row 'r.no': the module refuses this word"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace crossdev::conformance
