// Expectation files: glob matching, first-match-wins, stale detection, file:line errors.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "parity/expectations.h"

namespace crossdev::parity {
namespace {

class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    path_ = (std::filesystem::temp_directory_path() /
             ("crossdev_expect_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".yaml"))
                .string();
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Asserts that loading `text` fails at `line` with a message containing `fragment`.
void expect_load_error(const std::string& text, int line, const std::string& fragment) {
  TempFile file(text);
  try {
    ExpectationFile::load(file.path());
    ADD_FAILURE() << "expected an error for:\n" << text;
  } catch (const YamlError& e) {
    EXPECT_EQ(e.where().line, line) << e.what();
    EXPECT_EQ(e.where().file, file.path());
    EXPECT_EQ(std::string(e.what()).rfind(file.path() + ":" + std::to_string(line) + ": ", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(GlobMatch, StarsQuestionMarksAndLiterals) {
  EXPECT_TRUE(glob_match("ops.rms_norm/cpu/*/large/fused", "ops.rms_norm/cpu/float16/large/fused"));
  EXPECT_FALSE(glob_match("ops.rms_norm/cpu/*/large/fused", "ops.rms_norm/cpu/float16/large/fallback"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("*/torchscript", "ops.a/cpu/float32/basic/torchscript"));  // '*' spans '/'
  EXPECT_TRUE(glob_match("ops.?", "ops.x"));
  EXPECT_FALSE(glob_match("ops.?", "ops.xy"));
  EXPECT_FALSE(glob_match("ops", "ops.x"));
  EXPECT_TRUE(glob_match("a*b*c", "aXXbYYbc"));  // needs backtracking
  EXPECT_FALSE(glob_match("a*b*c", "aXXbYYb"));
}

TEST(GlobMatch, ClassesAsFilterAndPythonsFnmatchcaseHaveThem) {  // one dialect (expectations.h)
  EXPECT_TRUE(glob_match("[co]*", "claims.x"));
  EXPECT_TRUE(glob_match("[co]*", "ops.x"));
  EXPECT_FALSE(glob_match("[co]*", "redirect.x"));
  EXPECT_TRUE(glob_match("ops.[!m]*", "ops.rotary"));
  EXPECT_FALSE(glob_match("ops.[!m]*", "ops.modulate"));
  EXPECT_TRUE(glob_match("a\\b", "a\\b")) << "a backslash is literal, as in fnmatch.fnmatchcase";
  EXPECT_FALSE(glob_match("a\\*", "a*")) << "it escapes nothing";
}

TEST(ExpectationFile, LoadsEntriesAndTheFirstMatchWins) {
  TempFile file(R"(description: test
expectations:
  - match: "ops.x/cpu/float16/*"
    status: xfail
    reason: first
  - match: "ops.x/*"
    status: skip
    reason: second
)");
  const ExpectationFile f = ExpectationFile::load(file.path());
  ASSERT_EQ(f.entries().size(), 2u);
  EXPECT_EQ(f.entries()[0].line, 3);
  EXPECT_EQ(f.entries()[1].line, 6);
  const Expectation* e = f.find("ops.x/cpu/float16/basic/fused");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->reason, "first");
  EXPECT_EQ(e->status, ExpectedStatus::XFail);
  e = f.find("ops.x/cpu/float32/basic/fused");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->status, ExpectedStatus::Skip);
  EXPECT_EQ(f.find("ops.y/cpu/float32/basic/fused"), nullptr);
}

TEST(ExpectationFile, StaleEntriesMatchNoCase) {
  TempFile file(R"(expectations:
  - {match: "ops.x/*", status: xfail, reason: used}
  - {match: "ops.renamed/*", status: xfail, reason: stale}
)");
  const ExpectationFile f = ExpectationFile::load(file.path());
  const auto stale = f.stale({"ops.x/cpu/float32/basic/fused", "ops.z/cpu/float32/basic/fused"});
  ASSERT_EQ(stale.size(), 1u);
  EXPECT_EQ(stale[0]->match, "ops.renamed/*");
  EXPECT_EQ(stale[0]->line, 3);
}

TEST(ExpectationFile, AnEntryMayNameItsFailureClass) {
  TempFile file(R"(expectations:
  - {match: "opinfo.x/fft.*", status: skip, reason: segfaults on sim, class: crash}
  - {match: "opinfo.x/*", status: xfail, reason: hand-written}
)");
  const ExpectationFile f = ExpectationFile::load(file.path());
  ASSERT_EQ(f.entries().size(), 2u);
  EXPECT_EQ(f.entries()[0].failure_class, "crash");
  EXPECT_EQ(f.entries()[1].failure_class, "");
}

TEST(ExpectationFile, AbsentFileMeansNoExpectations) {
  const ExpectationFile f = ExpectationFile::load_if_exists("/nonexistent/crossdev/expectations/cuda.yaml");
  EXPECT_TRUE(f.entries().empty());
  EXPECT_THROW(ExpectationFile::load("/nonexistent/crossdev/expectations/cuda.yaml"), YamlError);
}

TEST(ExpectationFile, ErrorsNameFileLineAndWhatWasExpected) {
  expect_load_error("expectations:\n  - {match: a, status: flaky, reason: r}\n", 2, "expected xfail or skip");
  expect_load_error("expectations:\n  - {match: a, status: xfail}\n", 2, "missing key 'reason'");
  expect_load_error("expectations:\n  - match: a\n    status: xfail\n    reason: r\n    owner: me\n", 5, "unknown key 'owner'");
  expect_load_error("expectations:\n  - {match: a, status: xfail, reason: \"\"}\n", 2, "non-empty string");
  expect_load_error("expectations:\n  - {match: a, status: xfail, reason: r, class: slow}\n", 2,
                    "class 'slow': expected one of unimplemented, dtype_unsupported, numerics, crash");
  expect_load_error("expectation: []\n", 1, "unknown top-level key 'expectation'");
  expect_load_error("description: x\n", 1, "missing top-level key 'expectations'");
  expect_load_error("expectations: {match: a}\n", 1, "must be a list");
  expect_load_error("expectations:\n  - [a, b]\n", 2, "expected a mapping");
  expect_load_error("expectations:\n  - {match: a, match: b, status: xfail, reason: r}\n", 2, "duplicate key 'match'");
  expect_load_error("expectations: [\n", 2, "YAML syntax error");
}

}  // namespace
}  // namespace crossdev::parity
