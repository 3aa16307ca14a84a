#include "runner/child_process.h"

#include <csignal>

#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace crossdev::conformance {
namespace {

std::string name_of(const std::string& entry) { return entry.substr(0, entry.find('=')); }

}  // namespace

std::vector<std::string> child_environment(const std::vector<std::string>& set) {
  std::vector<std::string> env(set);
  env.push_back(std::string(kParentPidVariable) + "=" + std::to_string(::getpid()));
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    bool replaced = false;
    for (const std::string& s : env) replaced = replaced || name_of(s) == name_of(entry);
    if (!replaced) env.push_back(entry);
  }
  return env;
}

std::vector<char*> envp_of(std::vector<std::string>& strings) {
  std::vector<char*> envp;
  for (std::string& s : strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  return envp;
}

int spawn_child(const ChildSpec& spec, pid_t* pid) {
  std::vector<char*> argv;
  for (const std::string& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings = spec.env;
  std::vector<char*> envp = envp_of(env_strings);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (int fd : spec.close_first) posix_spawn_file_actions_addclose(&actions, fd);
  for (const auto& [from, to] : spec.dup2s) posix_spawn_file_actions_adddup2(&actions, from, to);  // clears O_CLOEXEC
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults, none;
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGPIPE}) sigaddset(&defaults, sig);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &none);
  short flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
  if (spec.own_group) {
    posix_spawnattr_setpgroup(&attr, 0);
    flags |= POSIX_SPAWN_SETPGROUP;
  }
  posix_spawnattr_setflags(&attr, flags);
  const int rc = spec.search_path ? ::posix_spawnp(pid, argv[0], &actions, &attr, argv.data(), envp.data())
                                  : ::posix_spawn(pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return rc;
}

const char* signal_name(int sig) noexcept {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGABRT: return "SIGABRT";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    case SIGPIPE: return "SIGPIPE";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    case SIGXCPU: return "SIGXCPU";
    default: return "";
  }
}

int wait_child(pid_t pid, bool kill_first, bool group) {
  if (kill_first) {
    if (group) ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

bool child_ended(pid_t pid, int* wait_status) { return ::waitpid(pid, wait_status, WNOHANG) == pid; }

void describe_signal(int sig, char* out, std::size_t size) noexcept {
  if (size == 0) return;
  std::size_t n = 0;
  const auto put = [&](const char* text) {
    for (; *text != '\0' && n + 1 < size; ++text) out[n++] = *text;
  };
  char number[12];
  char* first = number + sizeof number - 1;
  *first = '\0';
  unsigned v = sig < 0 ? 0u : static_cast<unsigned>(sig);
  do {
    *--first = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  put("was killed by signal ");
  put(first);
  if (*signal_name(sig) != '\0') {
    put(" (");
    put(signal_name(sig));
    put(")");
  }
  out[n] = '\0';
}

std::string describe_exit(int wait_status, const std::string& who) {
  std::string how;
  if (WIFSIGNALED(wait_status)) {
    char words[64];
    describe_signal(WTERMSIG(wait_status), words, sizeof words);
    how = words;
  } else if (WIFEXITED(wait_status)) {
    how = "exited with status " + std::to_string(WEXITSTATUS(wait_status));
  } else {
    how = "ended abnormally";
  }
  return who.empty() ? how : who + " " + how;
}

void die_with_parent(int exit_code) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (const char* parent = std::getenv(kParentPidVariable)) {
    if (std::to_string(::getppid()) != parent) std::_Exit(exit_code);
  }
}

}  // namespace crossdev::conformance
