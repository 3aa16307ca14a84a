// Every child the engine starts gets one variable naming its parent, CROSSDEV_PARENT_PID, in its own
// environment only (runner/child_environment.h): the engine's process, which may be a user's Python
// process, keeps its environment as it was.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "runner/child_environment.h"

namespace crossdev::conformance {
namespace {

int count_named(const std::vector<std::string>& env, const std::string& name) {
  return static_cast<int>(std::count_if(env.begin(), env.end(), [&](const std::string& e) { return e.rfind(name + "=", 0) == 0; }));
}

TEST(ChildEnvironment, NamesThisProcessAsTheParentInTheChildOnly) {
  ::unsetenv(kParentPidVariable);
  const auto env = child_environment();
  EXPECT_EQ(count_named(env, kParentPidVariable), 1);
  EXPECT_NE(std::find(env.begin(), env.end(), std::string(kParentPidVariable) + "=" + std::to_string(::getpid())), env.end());
  EXPECT_EQ(std::getenv(kParentPidVariable), nullptr) << "this process's own environment is left as it was";
}

TEST(ChildEnvironment, AGrandchildNamesItsOwnParentNotTheEngine) {
  ::setenv(kParentPidVariable, "1", 1);  // what an isolation worker inherits from the engine
  const auto env = child_environment();
  EXPECT_EQ(count_named(env, kParentPidVariable), 1);
  EXPECT_NE(std::find(env.begin(), env.end(), std::string(kParentPidVariable) + "=" + std::to_string(::getpid())), env.end());
  ::unsetenv(kParentPidVariable);
}

TEST(ChildEnvironment, SetEntriesReplaceTheirNames) {
  ::setenv("CROSSDEV_TEST_CHILD_VAR", "old", 1);
  auto env = child_environment({"CROSSDEV_TEST_CHILD_VAR=new"});
  EXPECT_EQ(count_named(env, "CROSSDEV_TEST_CHILD_VAR"), 1);
  EXPECT_NE(std::find(env.begin(), env.end(), "CROSSDEV_TEST_CHILD_VAR=new"), env.end());
  const auto envp = envp_of(env);
  EXPECT_EQ(envp.size(), env.size() + 1);
  EXPECT_EQ(envp.back(), nullptr);
  ::unsetenv("CROSSDEV_TEST_CHILD_VAR");
}

}  // namespace
}  // namespace crossdev::conformance
