#include "runner/interrupt.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>

namespace crossdev::conformance {
namespace {

volatile sig_atomic_t g_signal = 0;
int g_pipe[2] = {-1, -1};

extern "C" void on_stop_signal(int sig) {
  const int saved = errno;
  g_signal = sig;
  if (g_pipe[1] >= 0) {
    const char byte = 1;
    [[maybe_unused]] const ssize_t n = ::write(g_pipe[1], &byte, 1);
  }
  errno = saved;
}

}  // namespace

void install_stop_handlers() {
  if (g_pipe[0] >= 0) return;
  if (::pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) g_pipe[0] = g_pipe[1] = -1;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;  // no SA_RESTART: a blocking call returns EINTR; a second signal is fatal
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

int stop_signal() noexcept { return g_signal; }
int stop_fd() noexcept { return g_pipe[0]; }

CaseResult interrupted_result(const Row& row, const Suite& suite) {
  CaseResult r = result_for(row, suite);
  r.status = Status::Skip;
  r.execution = Execution::NotRun;
  const int sig = stop_signal();
  r.message = std::string("not run: interrupted") +
              (sig == SIGINT ? " (SIGINT)" : sig == SIGTERM ? " (SIGTERM)" : "");
  r.details.emplace_back("not_run_reason", "interrupted");
  return r;
}

}  // namespace crossdev::conformance
