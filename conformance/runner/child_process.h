#pragma once
// The one way the engine starts a child process (an isolation worker, a Python worker) and the child's
// side of the bond. One variable, CROSSDEV_PARENT_PID, names the process that started it, set in the
// child's environment only (never in this process's: the engine may run inside a user's Python process,
// docs/python-worker.md); python/crossdev/worker.py reads the same variable.
//
// Adding a kind of child (docs/ARCHITECTURE.md, "Add a child process"): a ChildSpec and spawn_child; in
// the child, die_with_parent (C++) or worker.py's _die_with_parent (Python) first.
#include <sys/types.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace crossdev::conformance {

inline constexpr const char* kParentPidVariable = "CROSSDEV_PARENT_PID";

// This process's environment, each `set` entry ("NAME=value") replacing its name, and
// CROSSDEV_PARENT_PID=<this process's pid>.
std::vector<std::string> child_environment(const std::vector<std::string>& set = {});

// An envp for posix_spawn over `strings` (which must outlive it), null-terminated.
std::vector<char*> envp_of(std::vector<std::string>& strings);

// How a child starts. Its signals: SIGINT, SIGTERM and SIGPIPE at their defaults, none blocked (whatever
// this process does with them); its environment: `env` (child_environment() and what the kind adds).
struct ChildSpec {
  std::vector<std::string> argv;           // argv[0]: a path, or a name found on PATH when search_path
  std::vector<std::string> env;            // the whole environment
  std::vector<int> close_first;            // closed in the child before the dup2s (a pipe's other end)
  std::vector<std::pair<int, int>> dup2s;  // (from, to) in the child: its stdin, stdout, fd 3
  bool search_path = false;
  bool own_group = false;  // leads its own process group: a kill of the group takes its children too
};

// Starts the child; 0 and *pid, or the errno of the failure (the caller names the child in its message).
int spawn_child(const ChildSpec& spec, pid_t* pid);

// The one wait of every child the engine runs: SIGKILL first when `kill_first` (`group`: its whole process
// group too, a child started with own_group, so what it started goes with it), then the child reaped; its wait
// status.
int wait_child(pid_t pid, bool kill_first, bool group = false);
// Whether the child has ended, without waiting: true, reaped, its wait status in *wait_status.
bool child_ended(pid_t pid, int* wait_status);

// How a child ended, from its wait status, in the one wording of every child the engine runs (and of
// python/crossdev/child_process.py's describe_exit): "<who> was killed by signal 11 (SIGSEGV)", "<who> exited
// with status 2", or "<who> ended abnormally" (no `who`: the text alone).
std::string describe_exit(int wait_status, const std::string& who);
// describe_exit's words for a signal, "was killed by signal 11 (SIGSEGV)", into `out` (`size` bytes, always
// NUL-terminated); async-signal-safe: a fatal-signal handler writes them.
void describe_signal(int sig, char* out, std::size_t size) noexcept;
// A fatal signal's name ("SIGSEGV"), "" for one not in the table; async-signal-safe (a handler may call it).
const char* signal_name(int sig) noexcept;

// In a child: SIGKILL when the parent dies (PR_SET_PDEATHSIG), and exit at once with `exit_code` when the
// parent named by CROSSDEV_PARENT_PID is already gone (it died between the spawn and this call).
void die_with_parent(int exit_code);

}  // namespace crossdev::conformance
