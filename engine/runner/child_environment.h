#pragma once
// The environment of a child process the engine starts (an isolation worker, a Python worker) and the
// child's side of the bond: one variable, CROSSDEV_PARENT_PID, names the process that started it, set
// in the child's environment only (never in this process's: the engine may run inside a user's Python
// process, docs/python-worker.md). python/crossdev/worker.py reads the same variable.
#include <string>
#include <vector>

namespace crossdev::conformance {

inline constexpr const char* kParentPidVariable = "CROSSDEV_PARENT_PID";

// This process's environment, each `set` entry ("NAME=value") replacing its name, and
// CROSSDEV_PARENT_PID=<this process's pid>.
std::vector<std::string> child_environment(const std::vector<std::string>& set = {});

// An envp for posix_spawn over `strings` (which must outlive it), null-terminated.
std::vector<char*> envp_of(std::vector<std::string>& strings);

// In a child: SIGKILL when the parent dies (PR_SET_PDEATHSIG), and exit at once with `exit_code` when the
// parent named by CROSSDEV_PARENT_PID is already gone (it died between the spawn and this call).
void die_with_parent(int exit_code);

}  // namespace crossdev::conformance
