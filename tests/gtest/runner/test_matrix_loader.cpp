// Malformed matrices: every fixture in tests/fixtures/bad_matrices declares on its first
// line "# expect-error: <line>: <text>"; loading it must fail with exactly that file:line and
// a message containing the text. Adding a malformed case = adding a fixture file.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "scratch_dir.h"

#include "runner/catalog.h"
#include "runner/runner.h"
#include "runner/suite.h"

namespace crossdev::testing {
namespace {

namespace fs = std::filesystem;

struct Fixture {
  std::string path;
  int line = 0;
  std::string text;
};

void PrintTo(const Fixture& f, std::ostream* os) { *os << f.path; }

std::vector<Fixture> bad_fixtures() {
  std::vector<Fixture> out;
  for (const auto& entry : fs::directory_iterator(std::string(CROSSDEV_SOURCE_DIR) + "/tests/fixtures/bad_matrices")) {
    std::ifstream in(entry.path());
    std::string first;
    std::getline(in, first);
    const std::string tag = "# expect-error: ";
    Fixture f{entry.path().string(), 0, ""};
    if (first.rfind(tag, 0) == 0) {
      const std::string rest = first.substr(tag.size());
      const auto colon = rest.find(':');
      f.line = std::stoi(rest.substr(0, colon));
      f.text = rest.substr(colon + 2);
    }
    out.push_back(f);
  }
  std::sort(out.begin(), out.end(), [](const Fixture& a, const Fixture& b) { return a.path < b.path; });
  return out;
}

class BadMatrix : public ::testing::TestWithParam<Fixture> {};

TEST_P(BadMatrix, FailsWithFileLineAndExpectation) {
  const Fixture& f = GetParam();
  ASSERT_GT(f.line, 0) << f.path << ": first line must be '# expect-error: <line>: <text>'";
  try {
    conformance::load_catalog(f.path);
    FAIL() << f.path << " loaded without error; expected line " << f.line << ": " << f.text;
  } catch (const YamlError& e) {
    EXPECT_EQ(e.where().file, f.path);
    EXPECT_EQ(e.where().line, f.line) << e.what();
    EXPECT_NE(std::string(e.what()).find(f.text), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind(f.path + ":" + std::to_string(f.line) + ": ", 0), 0u) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, BadMatrix, ::testing::ValuesIn(bad_fixtures()),
                         [](const ::testing::TestParamInfo<Fixture>& info) {
                           std::string name = fs::path(info.param.path).stem().string();
                           for (char& c : name) if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

TEST(MatrixLoader, MissingPathNamesIt) {
  try {
    conformance::load_catalog("/nonexistent/matrix.yaml");
    FAIL();
  } catch (const YamlError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/matrix.yaml"), std::string::npos);
  }
}

TEST(MatrixLoader, ProjectMatricesLoad) {
  const auto catalog = conformance::load_catalog(CROSSDEV_MATRIX_DIR);
  EXPECT_GE(catalog.size(), 4u);
}

// The compact loader (scalars as text, libyaml events) reads documents with anchors and
// aliases through yaml-cpp's node tree, and both give the same rows.
TEST(MatrixLoader, AnchorsAliasesAndNestedValues) {
  const ScratchDir scratch("crossdev-loader");
  const fs::path& dir = scratch.path();
  const std::string body =
      "suite: context\n"
      "defaults: {device: cpu}\n"
      "cases:\n"
      "  - {id: a, source: s, check: autocast, expect: cpu, intent: \"quoted ~\"}\n"
      "  - id: b\n"
      "    source: s\n"
      "    check: autocast\n"
      "    expect: cpu\n";
  std::ofstream(dir / "plain.yaml") << body;
  std::ofstream(dir / "anchored.yaml") << body << "  - {id: c, source: &src s, check: autocast, expect: *src}\n";
  for (const char* name : {"plain.yaml", "anchored.yaml"}) {
    const auto catalog = conformance::load_catalog((dir / name).string());
    ASSERT_EQ(catalog.size(), 1u);
    const auto& rows = catalog[0].rows;
    ASSERT_GE(rows.size(), 2u) << name;
    EXPECT_EQ(rows[0].intent(), "quoted ~");
    EXPECT_EQ(rows[0].str("device"), "cpu");  // from defaults
    EXPECT_EQ(rows[0].where("device").line, 2);
    EXPECT_EQ(rows[1].where().line, 5);
    EXPECT_EQ(rows[1].where("expect").line, 8);
    EXPECT_TRUE(rows[1].node("expect").IsScalar());
    EXPECT_EQ(rows[1].keys(), (std::vector<std::string>{"check", "device", "expect", "id", "source"}));
  }
  EXPECT_EQ(conformance::load_catalog((dir / "anchored.yaml").string())[0].rows[2].str("expect"), "s");
}

// A mapping nested in a row's value keeps each of its keys (the loader once wrote every key of a
// nested flow mapping as its last one: {rtol: 1, atol: 2} read as {atol: 1, atol: 2}).
TEST(MatrixLoader, NestedMappingsKeepEachOfTheirKeys) {
  const ScratchDir scratch("crossdev-nested");
  const fs::path& dir = scratch.path();
  std::ofstream(dir / "nested.yaml")
      << "suite: opinfo\n"
         "cases:\n"
         "  - {id: a, source: s, intent: i, opinfo: sin, devices: [cpu], dtypes: [float32], tolerance: {rtol: 1, atol: 2}}\n"
         "  - {id: b, source: s, intent: i, opinfo: sin, devices: [cpu], dtypes: [float32],\n"
         "     tolerance: {float32: {rtol: 3, atol: 4}, float16: {rtol: 5, atol: 6}}}\n";
  const auto catalog = conformance::load_catalog((dir / "nested.yaml").string());
  ASSERT_EQ(catalog.size(), 1u);
  const auto& rows = catalog[0].rows;
  ASSERT_EQ(rows.size(), 2u);
  const YAML::Node& every = rows[0].node("tolerance");
  ASSERT_EQ(every.size(), 2u);
  EXPECT_EQ(every["rtol"].as<double>(), 1);
  EXPECT_EQ(every["atol"].as<double>(), 2);
  const YAML::Node& per_dtype = rows[1].node("tolerance");
  EXPECT_EQ(per_dtype["float32"]["rtol"].as<double>(), 3);
  EXPECT_EQ(per_dtype["float16"]["atol"].as<double>(), 6);
}

TEST(MatrixLoader, SpecialFilesAndOversizedFilesAreRefused) {
  const ScratchDir scratch("crossdev-special");
  const fs::path& dir = scratch.path();
  ASSERT_EQ(::mkfifo((dir / "fifo.yaml").c_str(), 0600), 0);
  for (const std::string& path : {(dir / "fifo.yaml").string(), std::string("/dev/zero"), std::string("/proc/self/status")}) {
    try {
      conformance::load_catalog(path);
      ADD_FAILURE() << path;
    } catch (const YamlError& e) {
      EXPECT_EQ(e.where().file, path);
      EXPECT_NE(std::string(e.what()).find("expected a regular file"), std::string::npos) << e.what();
    }
  }
  const std::string small = std::string(CROSSDEV_MATRIX_DIR) + "/context.yaml";
  EXPECT_THROW(conformance::load_catalog(small, 100), YamlError);
  EXPECT_NO_THROW(conformance::load_catalog(small, 1 << 20));
}

TEST(MatrixRunner, WrongExpectationsGoRed) {
  const auto catalog =
      conformance::load_catalog(std::string(CROSSDEV_SOURCE_DIR) + "/tests/fixtures/failing_matrices");
  const conformance::RunContext ctx{HostProfile::probe(), ""};
  std::map<std::string, conformance::Status> status;
  std::map<std::string, std::string> message;
  for (const auto& r : conformance::run_catalog(catalog, ctx)) {
    status[r.id] = r.status;
    message[r.id] = r.message;
  }
  EXPECT_EQ(status.at("wrong.device"), conformance::Status::Fail);
  EXPECT_NE(message.at("wrong.device").find("expected cpu [honored], got mps:0 [redirected]"), std::string::npos)
      << message.at("wrong.device");
  EXPECT_EQ(status.at("wrong.action"), conformance::Status::Fail);
  EXPECT_EQ(status.at("wrong.sequence-step"), conformance::Status::Fail);
  EXPECT_NE(message.at("wrong.sequence-step").find("step 3"), std::string::npos);
  EXPECT_EQ(status.at("right.control"), conformance::Status::Pass);
}

}  // namespace
}  // namespace crossdev::testing
