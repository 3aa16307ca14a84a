// The case statuses and executions are one table, python/crossdev/case_statuses.json: the engine's enums
// are generated from it (cmake/CrossdevCaseStatuses.cmake), Python reads it, and a case record carries
// them by name between processes, never as an enum ordinal (runner/worker_events.cpp; tested in
// test_worker_events.cpp).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "runner/case_result.h"
#include "runner/runner.h"

namespace crossdev::conformance {
namespace {

YAML::Node table() { return YAML::LoadFile(std::string(CROSSDEV_SOURCE_DIR) + "/python/crossdev/case_statuses.json"); }

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

}  // namespace
}  // namespace crossdev::conformance
