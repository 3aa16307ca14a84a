// The case statuses and executions are one table, python/crossdev/case_statuses.json: the engine's enums
// are generated from it (cmake/CrossdevCaseStatuses.cmake), Python reads it, and a case record carries
// them by name between processes, never as an enum ordinal (runner/case_codec.cpp).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "runner/case_codec.h"
#include "runner/case_result.h"
#include "runner/runner.h"

namespace crossdev::conformance {
namespace {

YAML::Node table() { return YAML::LoadFile(std::string(CROSSDEV_SOURCE_DIR) + "/python/crossdev/case_statuses.json"); }

std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out(1);
  for (char c : line) {
    if (c == '\t') out.emplace_back(); else out.back() += c;
  }
  return out;
}

std::string with_field(const std::string& line, std::size_t index, const std::string& value) {
  auto f = fields(line);
  f[index] = value;
  std::string out = f[0];
  for (std::size_t i = 1; i < f.size(); ++i) out += '\t' + f[i];
  return out;
}

TEST(CaseStatuses, TheEnginesEnumsAreTheTablesRows) {
  const YAML::Node statuses = table()["statuses"];
  ASSERT_EQ(statuses.size(), std::size(kAllStatuses));
  for (std::size_t i = 0; i < statuses.size(); ++i) {
    const auto name = statuses[i]["name"].as<std::string>();
    EXPECT_STREQ(status_name(kAllStatuses[i]), name.c_str());
    EXPECT_EQ(status_gates(kAllStatuses[i]), statuses[i]["gates"].as<bool>()) << name;
    EXPECT_EQ(status_junit_element(kAllStatuses[i]), statuses[i]["junit"].as<std::string>()) << name;
    EXPECT_EQ(status_named(name), kAllStatuses[i]) << name;
  }
  const YAML::Node executions = table()["executions"];
  ASSERT_EQ(executions.size(), std::size(kAllExecutions));
  for (std::size_t i = 0; i < executions.size(); ++i) {
    const auto name = executions[i]["name"].as<std::string>();
    EXPECT_STREQ(execution_name(kAllExecutions[i]), name.c_str());
    EXPECT_EQ(execution_named(name), kAllExecutions[i]) << name;
  }
  EXPECT_FALSE(status_named("Pass").has_value()) << "names are exact";
}

TEST(CaseStatuses, TheSummaryGatesOnTheTablesGatingStatuses) {
  for (const Status s : kAllStatuses) {
    RunSummary summary;
    CaseResult r;
    r.status = s;
    summary.add(r);
    EXPECT_EQ(summary.gates(), status_gates(s)) << status_name(s);
    EXPECT_EQ(summary.count(s), 1) << status_name(s);
  }
}

TEST(CaseCodec, StatusAndExecutionTravelByName) {
  CaseResult r;
  r.id = "row/case";
  r.status = Status::XPass;
  r.execution = Execution::Simulated;
  r.message = "tab\there";
  const std::string line = encode_case(r);
  const auto f = fields(line);
  ASSERT_GE(f.size(), 11u);
  EXPECT_EQ(f[8], "xpass");
  EXPECT_EQ(f[10], "simulated");
  const auto back = decode_case(line);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->status, Status::XPass);
  EXPECT_EQ(back->execution, Execution::Simulated);
  EXPECT_EQ(back->message, "tab\there");
}

TEST(CaseCodec, AnOrdinalOrAnUnknownNameIsAMalformedRecord) {
  CaseResult r;
  r.id = "row/case";
  const std::string line = encode_case(r);
  ASSERT_TRUE(decode_case(line).has_value());
  EXPECT_FALSE(decode_case(with_field(line, 8, "3")).has_value()) << "the old ordinal of xpass";
  EXPECT_FALSE(decode_case(with_field(line, 8, "passed")).has_value());
  EXPECT_FALSE(decode_case(with_field(line, 10, "1")).has_value()) << "the old ordinal of simulated";
  EXPECT_FALSE(decode_case(with_field(line, 10, "")).has_value());
}

}  // namespace
}  // namespace crossdev::conformance
