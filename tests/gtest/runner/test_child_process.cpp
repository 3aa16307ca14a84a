// Every child the engine starts is started by spawn_child (runner/child_process.h) and gets one variable
// naming its parent, CROSSDEV_PARENT_PID, in its own environment only: the engine's process, which may be
// a user's Python process, keeps its environment as it was. A throwaway child (sh) reports what it got.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>

#include "runner/child_process.h"

namespace crossdev::conformance {
namespace {

int count_named(const std::vector<std::string>& env, const std::string& name) {
  return static_cast<int>(std::count_if(env.begin(), env.end(), [&](const std::string& e) { return e.rfind(name + "=", 0) == 0; }));
}

TEST(ChildProcess, NamesThisProcessAsTheParentInTheChildOnly) {
  ::unsetenv(kParentPidVariable);
  const auto env = child_environment();
  EXPECT_EQ(count_named(env, kParentPidVariable), 1);
  EXPECT_NE(std::find(env.begin(), env.end(), std::string(kParentPidVariable) + "=" + std::to_string(::getpid())), env.end());
  EXPECT_EQ(std::getenv(kParentPidVariable), nullptr) << "this process's own environment is left as it was";
}

TEST(ChildProcess, AGrandchildNamesItsOwnParentNotTheEngine) {
  ::setenv(kParentPidVariable, "1", 1);  // what an isolation worker inherits from the engine
  const auto env = child_environment();
  EXPECT_EQ(count_named(env, kParentPidVariable), 1);
  EXPECT_NE(std::find(env.begin(), env.end(), std::string(kParentPidVariable) + "=" + std::to_string(::getpid())), env.end());
  ::unsetenv(kParentPidVariable);
}

TEST(ChildProcess, SetEntriesReplaceTheirNames) {
  ::setenv("CROSSDEV_TEST_CHILD_VAR", "old", 1);
  auto env = child_environment({"CROSSDEV_TEST_CHILD_VAR=new"});
  EXPECT_EQ(count_named(env, "CROSSDEV_TEST_CHILD_VAR"), 1);
  EXPECT_NE(std::find(env.begin(), env.end(), "CROSSDEV_TEST_CHILD_VAR=new"), env.end());
  const auto envp = envp_of(env);
  EXPECT_EQ(envp.size(), env.size() + 1);
  EXPECT_EQ(envp.back(), nullptr);
  ::unsetenv("CROSSDEV_TEST_CHILD_VAR");
}

// Runs `script` under sh through spawn_child with its stdout on a pipe; (exit status, what it printed).
std::pair<int, std::string> run_child(const std::string& script, bool own_group) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return {-1, "pipe failed"};
  ChildSpec spec;
  spec.argv = {"sh", "-c", script};
  spec.env = child_environment({"CROSSDEV_TEST_CHILD_VAR=given"});
  spec.dup2s = {{out[1], 1}};
  spec.search_path = true;
  spec.own_group = own_group;
  pid_t pid = -1;
  const int rc = spawn_child(spec, &pid);
  ::close(out[1]);
  if (rc != 0) {
    ::close(out[0]);
    return {-1, "spawn failed"};
  }
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = ::read(out[0], buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(n));
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text + " " + std::to_string(pid)};
}

TEST(ChildProcess, AChildGetsItsEnvironmentTheParentVariableAndDefaultSignals) {
  // This process blocks SIGTERM and ignores SIGINT: the child must get neither.
  sigset_t block, previous_mask;
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  ::sigprocmask(SIG_BLOCK, &block, &previous_mask);
  struct sigaction ignore {}, previous_int {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ignore, &previous_int);
  const auto [rc, text] = run_child(
      "printf '%s %s ' \"$CROSSDEV_PARENT_PID\" \"$CROSSDEV_TEST_CHILD_VAR\"; "
      "awk '/^SigBlk|^SigIgn/ {printf \"%s \", $2}' /proc/self/status; cut -d' ' -f5 /proc/$$/stat | tr -d '\\n'",
      false);
  ::sigaction(SIGINT, &previous_int, nullptr);
  ::sigprocmask(SIG_SETMASK, &previous_mask, nullptr);
  ASSERT_EQ(rc, 0) << text;
  std::istringstream in(text);
  std::string parent, var, blocked, ignored, group, child;
  in >> parent >> var >> blocked >> ignored >> group >> child;
  EXPECT_EQ(parent, std::to_string(::getpid()));
  EXPECT_EQ(var, "given");
  const unsigned long long blocked_mask = std::stoull(blocked, nullptr, 16), ignored_mask = std::stoull(ignored, nullptr, 16);
  EXPECT_EQ(blocked_mask & (1ULL << (SIGTERM - 1)), 0u) << "SIGTERM is not blocked in the child: " << text;
  EXPECT_EQ(ignored_mask & (1ULL << (SIGINT - 1)), 0u) << "SIGINT is at its default in the child: " << text;
  EXPECT_EQ(group, std::to_string(::getpgrp())) << "without own_group the child stays in this process's group";
  EXPECT_NE(child, group);
}

TEST(ChildProcess, OwnGroupMakesTheChildLeadItsGroup) {
  const auto [rc, text] = run_child("cut -d' ' -f5 /proc/$$/stat | tr -d '\\n'", true);
  ASSERT_EQ(rc, 0) << text;
  std::istringstream in(text);
  std::string group, child;
  in >> group >> child;
  EXPECT_EQ(group, child) << "the child leads its own process group";
}

// The one wait: a child killed (its group too) or waited for, and its status.
TEST(ChildProcess, WaitChildKillsOrWaitsForTheChild) {
  ChildSpec spec;
  spec.argv = {"sh", "-c", "sleep 600"};
  spec.env = child_environment();
  spec.search_path = true;
  spec.own_group = true;
  pid_t pid = -1;
  ASSERT_EQ(spawn_child(spec, &pid), 0);
  int status = 0;
  EXPECT_FALSE(child_ended(pid, &status)) << "it sleeps";
  status = wait_child(pid, /*kill_first=*/true, /*group=*/true);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;

  spec.argv = {"sh", "-c", "exit 3"};
  spec.own_group = false;
  ASSERT_EQ(spawn_child(spec, &pid), 0);
  status = wait_child(pid, /*kill_first=*/false);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 3) << status;
}

// How a child ended is worded once, as Python's child_process.describe_exit words it; the signal's words are
// those a fatal-signal handler writes (the library check's).
TEST(ChildProcess, DescribeExitAndDescribeSignalWordHowAChildEnded) {
  EXPECT_EQ(describe_exit(SIGKILL, "worker"), "worker was killed by signal 9 (SIGKILL)");  // a wait status
  EXPECT_EQ(describe_exit(3 << 8, ""), "exited with status 3");
  char words[64];
  describe_signal(SIGSEGV, words, sizeof words);
  EXPECT_STREQ(words, "was killed by signal 11 (SIGSEGV)");
  describe_signal(SIGUSR1, words, sizeof words);
  EXPECT_EQ(std::string(words), "was killed by signal " + std::to_string(SIGUSR1)) << "no name in the table";
  describe_signal(SIGSEGV, words, 8);
  EXPECT_STREQ(words, "was kil") << "cut to the room given, always terminated";
}

TEST(ChildProcess, AChildThatCannotStartIsAnErrnoNotAThrow) {
  ChildSpec spec;
  spec.argv = {"/nonexistent/crossdev-no-such-child"};
  spec.env = child_environment();
  pid_t pid = -1;
  EXPECT_EQ(spawn_child(spec, &pid), ENOENT);
}

}  // namespace
}  // namespace crossdev::conformance
