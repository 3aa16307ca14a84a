// Mutation check: with each deliberately broken fused kernel active (tests/mutants), the ops
// matrix rows of the mutant's op, run on the CPU, must go red. A mutant that survives marks a
// class of bug the parity checks cannot see.
//
// Only cases that are green without any mutant count as catching one (a case that already
// fails proves nothing), and the `large` shape set is left out to keep the run short: the
// mutants are exposed by shape (tails, strides, batches, row lengths), not by size.
#include <cstdio>
#include <iostream>
#include <set>

#include <gtest/gtest.h>

#include "matrix_rows.h"
#include "mutants.h"
#include "ops/op_spec.h"
#include "runner/runner.h"
#include "runner/suite.h"

namespace crossdev::testing {
namespace {

// Restores "no mutant" however the test exits.
struct MutantScope {
  explicit MutantScope(const std::string& name) { mutants::set_active_mutant(name); }
  ~MutantScope() { mutants::set_active_mutant(""); }
};

// The row with `large` removed from its shape sets. Fields are copied into a fresh map and the
// list replaced by erase + emplace: assigning to a copied YAML::Node would write through to the
// original row's node.
conformance::Row without_large(const conformance::Row& row) {
  std::vector<std::string> sets = row.has("shape_sets") ? row.str_list("shape_sets")
                                                        : ops::find_op(row.str("op"))->shape_sets();
  YAML::Node kept(YAML::NodeType::Sequence);
  for (const std::string& s : sets)
    if (s != "large") kept.push_back(s);
  std::map<std::string, YAML::Node> fields;
  for (const std::string& key : row.keys()) fields.emplace(key, row.node(key));
  fields.erase("shape_sets");
  fields.emplace("shape_sets", kept);
  return conformance::Row(row.file(), row.node("id"), std::move(fields));
}

struct OpRun {
  int cases = 0;
  std::set<std::string> red;  // ids of gating cases
  std::string first_red;
};

OpRun run_op_rows(const std::vector<conformance::Row>& rows, const std::string& op) {
  static const conformance::RunContext cpu_only{HostProfile(), ""};  // the mutants are CPU kernels
  const conformance::Suite& suite = *conformance::find_suite("ops");
  OpRun out;
  for (const conformance::Row& row : rows) {
    if (row.str("op") != op) continue;
    for (const auto& r : conformance::run_row(suite, row, cpu_only)) {
      ++out.cases;
      if (!conformance::status_gates(r.status)) continue;
      if (out.red.empty()) out.first_red = r.id + ": " + r.message.substr(0, 160);
      out.red.insert(r.id);
    }
  }
  return out;
}

TEST(Mutation, EveryMutantTurnsTheOpsMatrixRed) {
  const auto params = rows_of_suite("ops");
  ASSERT_TRUE(params.front().row) << params.front().load_error;
  std::vector<conformance::Row> rows;
  for (const RowParam& p : params) rows.push_back(without_large(*p.row));

  const std::vector<std::string> mutants = crossdev::mutants::mutant_names();
  ASSERT_FALSE(mutants.empty());
  std::map<std::string, OpRun> baseline;  // per op, no mutant active
  int caught = 0;
  for (const std::string& mutant : mutants) {
    // Mutant names are "<op>.<defect>": only that op's rows can catch it.
    const std::string op = mutant.substr(0, mutant.find('.'));
    if (!baseline.count(op)) baseline[op] = run_op_rows(rows, op);
    OpRun run;
    {
      MutantScope scope(mutant);
      run = run_op_rows(rows, op);
    }
    int newly_red = 0;
    std::string first;
    for (const std::string& id : run.red) {
      if (baseline[op].red.count(id)) continue;
      if (newly_red++ == 0) first = id;
    }
    EXPECT_GT(run.cases, 0) << "mutant " << mutant << ": no ops.yaml row covers op '" << op << "'";
    EXPECT_GT(newly_red, 0) << "mutant " << mutant << " survived " << run.cases << " cases ("
                            << baseline[op].red.size() << " were red without it)";
    caught += newly_red > 0;
    std::cout << "[  MUTANT  ] " << mutant << ": " << (newly_red > 0 ? "caught" : "SURVIVED") << ", " << newly_red << "/"
              << run.cases << " cases turned red" << (first.empty() ? "" : "; first: " + first) << "\n";
  }
  const int n = static_cast<int>(mutants.size());
  std::printf("mutants caught: %d/%d (%.0f%%)\n", caught, n, 100.0 * caught / n);
  EXPECT_EQ(caught, n);
}

}  // namespace
}  // namespace crossdev::testing
