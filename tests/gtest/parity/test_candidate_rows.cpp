// Candidate rows of the ops suite (issue 14): the schema fit rules of parity/dispatcher_op.h on
// parsed schemas, and the fixtures of tests/fixtures/candidate_matrices run against the
// test-only libcrossdev_test_candidates, loaded with dlopen as `crossdev run --load-library` does.
#include <dlfcn.h>

#include <fstream>
#include <ostream>
#include <string>

#include <gtest/gtest.h>
#include <torch/csrc/jit/frontend/function_schema_parser.h>

#include "parity/dispatcher_op.h"
#include "runner/catalog.h"
#include "runner/runner.h"

namespace crossdev::testing {
namespace {

using conformance::CaseResult;
using conformance::Status;

// ---- schema fit --------------------------------------------------------------------------

struct FitCase {
  const char* name;  // the test's name
  const char* candidate;
  const char* expected;  // "" = fits; else a substring of the mismatch
};

void PrintTo(const FitCase& c, std::ostream* os) { *os << c.candidate; }

class SchemaFit : public ::testing::TestWithParam<FitCase> {};

TEST_P(SchemaFit, AgainstModulate) {
  const auto reference = torch::jit::parseSchema("crossdev::modulate(Tensor x, Tensor shift, Tensor scale) -> Tensor");
  const std::string why = parity::schema_mismatch(torch::jit::parseSchema(GetParam().candidate), reference);
  if (std::string(GetParam().expected).empty()) {
    EXPECT_EQ(why, "") << GetParam().candidate;
  } else {
    EXPECT_NE(why.find(GetParam().expected), std::string::npos) << GetParam().candidate << ": " << why;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rules, SchemaFit,
    ::testing::Values(
        FitCase{"renamed_arguments", "m::a(Tensor input, Tensor b, Tensor c) -> Tensor", ""},
        FitCase{"optional_accepts_tensor", "m::a(Tensor x, Tensor? shift, Tensor? scale=None) -> Tensor", ""},
        FitCase{"extra_arguments_with_defaults", "m::a(Tensor x, Tensor shift, Tensor scale, float alpha=1.0, *, bool flag=False) -> Tensor", ""},
        FitCase{"too_few_arguments", "m::a(Tensor x, Tensor shift) -> Tensor", "takes 2 arguments (x, shift); crossdev::modulate passes 3"},
        FitCase{"float_for_tensor", "m::a(Tensor x, Tensor shift, float scale) -> Tensor", "argument 2 'scale' is float"},
        FitCase{"tensor_list_for_tensor", "m::a(Tensor x, Tensor shift, Tensor[] scale) -> Tensor", "argument 2 'scale' is Tensor[]"},
        FitCase{"two_returns", "m::a(Tensor x, Tensor shift, Tensor scale) -> (Tensor, Tensor)", "returns (Tensor, Tensor)"},
        FitCase{"no_return", "m::a(Tensor x, Tensor shift, Tensor scale) -> ()", "returns (); expected exactly one Tensor"},
        FitCase{"list_return", "m::a(Tensor x, Tensor shift, Tensor scale) -> Tensor[]", "returns Tensor[]"},
        FitCase{"writes_an_input", "m::a(Tensor(a!) x, Tensor shift, Tensor scale) -> Tensor(a!)", "argument 0 'x' is written to"},
        FitCase{"extra_argument_without_default", "m::a(Tensor x, Tensor shift, Tensor scale, int n) -> Tensor", "argument 3 'n' has no default"}),
    [](const ::testing::TestParamInfo<FitCase>& info) { return std::string(info.param.name); });

TEST(SchemaFit, OptionalReferenceArgumentsNeedOptionalCandidateArguments) {
  const auto reference = torch::jit::parseSchema(
      "crossdev::scaled_masked_softmax(Tensor scores, Tensor? mask=None, float scale=1.0) -> Tensor");
  EXPECT_EQ(parity::schema_mismatch(torch::jit::parseSchema("m::s(Tensor s, Tensor? m, float k) -> Tensor"), reference), "");
  EXPECT_NE(parity::schema_mismatch(torch::jit::parseSchema("m::s(Tensor s, Tensor m, float k) -> Tensor"), reference)
                .find("argument 1 'm' is Tensor; crossdev::scaled_masked_softmax passes Tensor? ('mask')"),
            std::string::npos);
  EXPECT_NE(parity::schema_mismatch(torch::jit::parseSchema("m::s(Tensor s, Tensor? m, int k) -> Tensor"), reference)
                .find("argument 2 'k' is int"),
            std::string::npos);
}

// ---- candidate rows on the fixtures --------------------------------------------------------

const std::string kFixtures = std::string(CROSSDEV_SOURCE_DIR) + "/tests/fixtures/candidate_matrices/";

class CandidateRows : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_NE(dlopen(CROSSDEV_TEST_CANDIDATES_LIBRARY, RTLD_NOW | RTLD_GLOBAL), nullptr) << dlerror();
  }
  static std::vector<CaseResult> run(const std::string& file) {
    return conformance::run_catalog(conformance::load_catalog(kFixtures + file), {HostProfile(), ""});
  }
};

TEST_F(CandidateRows, RightCandidatesPass) {
  const auto results = run("good.yaml");
  int passed = 0;
  for (const CaseResult& r : results) {
    EXPECT_FALSE(conformance::status_gates(r.status)) << r.id << ": " << r.message;
    passed += r.status == Status::Pass;
  }
  EXPECT_GT(passed, 20);  // cpu: 4 dtypes x 7 shape sets of modulate, and more
}

TEST_F(CandidateRows, AWrongCandidateFailsEveryCaseWithItsFirstMismatch) {
  for (const CaseResult& r : run("wrong.yaml")) {
    const bool wrong = r.id.rfind("cand.wrong/", 0) == 0;
    EXPECT_EQ(r.status, wrong ? Status::Fail : Status::Pass) << r.id << ": " << r.message;
    if (!wrong) continue;
    bool has_first_mismatch = false;
    for (const auto& [k, v] : r.details) has_first_mismatch |= k == "first_mismatch" && v.rfind("golden out [", 0) == 0;
    EXPECT_TRUE(has_first_mismatch) << r.id;
  }
}

TEST_F(CandidateRows, SchemasThatDoNotFitFailValidationWithFileLine) {
  for (const char* name : {"bad_two_args.yaml", "bad_float_scale.yaml", "bad_pair.yaml", "bad_inplace.yaml",
                           "bad_needs_alpha.yaml", "bad_reference.yaml"}) {
    std::ifstream in(kFixtures + name);
    std::string first;
    std::getline(in, first);
    const std::string expect = first.substr(std::string("# expect-error: ").size());
    const int line = std::stoi(expect);
    const std::string text = expect.substr(expect.find(": ") + 2);
    try {
      conformance::load_catalog(kFixtures + name);
      ADD_FAILURE() << name << " loaded; expected line " << line << ": " << text;
    } catch (const YamlError& e) {
      EXPECT_EQ(e.where().line, line) << e.what();
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace crossdev::testing
