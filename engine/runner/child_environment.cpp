#include "runner/child_environment.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdlib>

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

void die_with_parent(int exit_code) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (const char* parent = std::getenv(kParentPidVariable)) {
    if (std::to_string(::getppid()) != parent) std::_Exit(exit_code);
  }
}

}  // namespace crossdev::conformance
