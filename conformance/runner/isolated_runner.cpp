#include "runner/isolated_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "runner/case_codec.h"

extern char** environ;

namespace crossdev::conformance {
namespace {

constexpr int kWorkerFd = 3;

struct Worker {
  pid_t pid = -1;
  int fd = -1;
};

Worker spawn_worker(const IsolationOptions& opt, const MatrixFile& file, std::size_t start_row) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::vector<std::string> args = {opt.executable, "run", "--worker", "--matrix", file.path, "--start-row",
                                   std::to_string(start_row)};
  args.insert(args.end(), opt.extra_args.begin(), opt.extra_args.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // Close the read end first: it may itself be fd 3, the slot the write end is moved to.
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_adddup2(&actions, fds[1], kWorkerFd);
  Worker w;
  const int rc = posix_spawn(&w.pid, opt.executable.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    throw std::runtime_error("cannot start worker '" + opt.executable + "': " + std::strerror(rc));
  }
  w.fd = fds[0];
  return w;
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "worker killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  if (WIFEXITED(status)) return "worker exited with code " + std::to_string(WEXITSTATUS(status));
  return "worker ended abnormally";
}

// Reads one worker until it ends. Returns the index of the row that was running when it died,
// -1 when it finished cleanly (DONE), or -2 when it died before starting any row.
long read_worker(Worker& w, const MatrixFile& file, const IsolationOptions& opt, const ResultCallback& emit,
                 std::string* failure) {
  std::string buffer;
  long current = -1;
  bool done = false;
  auto row_started = std::chrono::steady_clock::now();
  for (;;) {
    pollfd p{w.fd, POLLIN, 0};
    const double left_s = opt.row_timeout_s -
                          std::chrono::duration<double>(std::chrono::steady_clock::now() - row_started).count();
    const int ready = ::poll(&p, 1, left_s <= 0 ? 0 : static_cast<int>(left_s * 1000) + 1);
    if (ready == 0) {  // timed out: the row in flight hangs
      ::kill(w.pid, SIGKILL);
      int status = 0;
      ::waitpid(w.pid, &status, 0);
      ::close(w.fd);
      char msg[96];
      std::snprintf(msg, sizeof msg, "timed out after %.0f s (worker killed)", opt.row_timeout_s);
      *failure = msg;
      return current < 0 ? -2 : current;
    }
    char chunk[65536];
    const ssize_t n = ::read(w.fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buffer.append(chunk, static_cast<std::size_t>(n));
    std::size_t nl;
    while ((nl = buffer.find('\n')) != std::string::npos) {
      const std::string line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      if (line.rfind("ROW ", 0) == 0) {
        current = std::stol(line.substr(4));
        row_started = std::chrono::steady_clock::now();
      } else if (line == "DONE") {
        done = true;
      } else if (auto r = decode_case(line)) {
        emit(*r);
      } else if (auto e = decode_oplog(line)) {
        manager::OpLog::global().record(std::move(*e));
      }
    }
  }
  ::close(w.fd);
  int status = 0;
  ::waitpid(w.pid, &status, 0);
  const bool clean_exit = WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 1);
  if (done && clean_exit) return -1;
  *failure = describe_exit(status);
  return current < 0 ? -2 : current;
}

}  // namespace

std::vector<CaseResult> run_isolated(const std::vector<MatrixFile>& catalog, const IsolationOptions& opt,
                                     const ResultCallback& on_result) {
  std::vector<CaseResult> all;
  auto emit = [&](const CaseResult& r) {
    if (on_result) on_result(r);
    all.push_back(r);
  };
  for (const auto& file : catalog) {
    const Suite* suite = find_suite(file.suite);
    std::size_t start = 0;
    while (start < file.rows.size()) {
      Worker w = spawn_worker(opt, file, start);
      std::string failure;
      const long died_at = read_worker(w, file, opt, emit, &failure);
      if (died_at == -1) break;
      if (died_at == -2) {  // the worker could not even start: every remaining row is an error
        for (std::size_t i = start; i < file.rows.size(); ++i) {
          CaseResult err = result_for(file.rows[i], *suite);
          err.status = Status::Error;
          err.execution = Execution::NotRun;
          err.message = failure + " before running any row";
          emit(err);
        }
        break;
      }
      const Row& row = file.rows[static_cast<std::size_t>(died_at)];
      CaseResult crash = result_for(row, *suite);
      crash.status = Status::Crash;
      crash.execution = Execution::NotRun;
      crash.message = failure + " while running this row";
      emit(crash);
      start = static_cast<std::size_t>(died_at) + 1;
    }
  }
  return all;
}

int run_worker(const MatrixFile& file, const RunContext& ctx, std::size_t start_row, int fd) {
  std::FILE* out = ::fdopen(fd, "w");
  if (!out) return 3;
  const Suite* suite = find_suite(file.suite);
  std::size_t log_sent = manager::OpLog::global().size();
  for (std::size_t i = start_row; i < file.rows.size(); ++i) {
    std::fprintf(out, "ROW %zu\n", i);
    std::fflush(out);  // the parent must know which row was running if we die
    for (const auto& r : run_row(*suite, file.rows[i], ctx)) std::fprintf(out, "%s\n", encode_case(r).c_str());
    const auto entries = manager::OpLog::global().entries();
    for (; log_sent < entries.size(); ++log_sent) std::fprintf(out, "%s\n", encode_oplog(entries[log_sent]).c_str());
    std::fflush(out);
  }
  std::fprintf(out, "DONE\n");
  std::fclose(out);
  return 0;
}

}  // namespace crossdev::conformance
