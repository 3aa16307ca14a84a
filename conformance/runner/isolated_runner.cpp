#include "runner/isolated_runner.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>

#include "runner/child_process.h"
#include "runner/event_stream.h"
#include "runner/interrupt.h"
#include "runner/worker_events.h"


namespace crossdev::conformance {
namespace {

constexpr int kWorkerFd = 3;
constexpr long kFinished = -1, kDiedBeforeAnyRow = -2, kInterrupted = -3;

struct Worker {
  pid_t pid = -1;
  int fd = -1;
};

// The worker leads its own process group, so the terminal's Ctrl-C reaches only this process
// (which then stops the worker and writes the bundle) and a kill takes any grandchildren too;
// the worker also asks for SIGKILL when this process dies (prctl in `crossdev run --worker`).
Worker spawn_worker(const IsolationOptions& opt, const MatrixFile& file, std::size_t start_row) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  ChildSpec spec;
  spec.argv = {opt.executable, "run", "--worker", "--matrix", file.path, "--start-row", std::to_string(start_row)};
  spec.argv.insert(spec.argv.end(), opt.extra_args.begin(), opt.extra_args.end());
  spec.env = child_environment();  // CROSSDEV_PARENT_PID: this process, in the child only
  spec.close_first = {fds[0]};      // the read end first: it may itself be fd 3, the slot the write end is moved to
  spec.dup2s = {{fds[1], kWorkerFd}};
  spec.own_group = true;
  Worker w;
  const int rc = spawn_child(spec, &w.pid);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    throw std::runtime_error("cannot start worker '" + opt.executable + "': " + std::strerror(rc));
  }
  w.fd = fds[0];
  return w;
}

// Reads one worker until it ends. Returns the index of the row that was running when it died
// (or when the run was interrupted, through *in_flight with kInterrupted), kFinished when it
// finished cleanly (`done`), or kDiedBeforeAnyRow. A row's cases are passed on only once the row
// is complete (the next `row` event or `done`), so a row cut short never reports half of its cases.
long read_worker(Worker& w, const IsolationOptions& opt, const ResultCallback& emit, std::string* failure,
                 long* in_flight) {
  EventStream events(w.fd);
  long current = -1;
  bool done = false;
  std::vector<CaseResult> row_cases;
  auto flush_row = [&] {
    for (const auto& r : row_cases) emit(r);
    row_cases.clear();
  };
  auto row_started = std::chrono::steady_clock::now();
  for (bool reading = true; reading;) {
    const double left_s = opt.row_timeout_s -
                          std::chrono::duration<double>(std::chrono::steady_clock::now() - row_started).count();
    WorkerEvent event;
    switch (events.next(&event, left_s, /*stoppable=*/!done)) {
      case EventStream::Read::Stopped:
        wait_child(w.pid, /*kill_first=*/true, /*group=*/true);
        *in_flight = current;
        return kInterrupted;
      case EventStream::Read::Timeout: {  // the row in flight hangs
        wait_child(w.pid, /*kill_first=*/true, /*group=*/true);
        char msg[96];
        std::snprintf(msg, sizeof msg, "timed out after %.0f s (worker killed)", opt.row_timeout_s);
        *failure = msg;
        return current < 0 ? kDiedBeforeAnyRow : current;
      }
      case EventStream::Read::End: reading = false; break;
      case EventStream::Read::Event:
        if (event.name == "row") {
          flush_row();
          current = event.index_or("index", -1);
          row_started = std::chrono::steady_clock::now();
        } else if (event.name == "done") {
          flush_row();
          done = true;
        } else if (auto e = oplog_from(event)) {
          manager::OpLog::global().record(std::move(*e));
        } else {  // a case, or an event this reader does not know: that row's error, never dropped
          std::optional<CaseResult> r = case_from(event);
          if (!r) r = unknown_event_case(event, "row, case, oplog and done");
          if (r->id.empty()) r->id = "row #" + std::to_string(current) + "/(unnamed case)";  // malformed: still counted
          row_cases.push_back(std::move(*r));
        }
        break;
    }
  }
  const int status = wait_child(w.pid, /*kill_first=*/false);
  const bool clean_exit = WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 1);
  if (done && clean_exit) return kFinished;
  *failure = describe_exit(status, "worker");
  return current < 0 ? kDiedBeforeAnyRow : current;
}

}  // namespace

std::vector<CaseResult> run_isolated(const std::vector<MatrixFile>& catalog, const IsolationOptions& opt,
                                     const ResultCallback& on_result) {
  std::vector<CaseResult> all;
  auto emit = [&](const CaseResult& r) {
    if (on_result) on_result(r);
    all.push_back(r);
  };
  bool interrupted = false;
  for (const auto& file : catalog) {
    const Suite* suite = find_suite(file.suite);
    std::size_t start = 0;
    while (!interrupted && start < file.rows.size()) {
      if (stop_signal() != 0) {
        interrupted = true;
        break;
      }
      Worker w = spawn_worker(opt, file, start);
      std::string failure;
      long in_flight = -1;
      const long died_at = read_worker(w, opt, emit, &failure, &in_flight);
      if (died_at == kFinished) break;
      if (died_at == kInterrupted) {
        interrupted = true;
        start = in_flight < 0 ? start : static_cast<std::size_t>(in_flight);
        break;
      }
      if (died_at == kDiedBeforeAnyRow) {  // the worker could not even start: every remaining row is an error
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
    if (interrupted) {
      for (std::size_t i = start; i < file.rows.size(); ++i) emit(interrupted_result(file.rows[i], *suite));
      start = 0;  // later files: every row
    }
  }
  return all;
}

int run_worker(const MatrixFile& file, const RunContext& ctx, std::size_t start_row, int fd) {
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);  // not inherited by this worker's own children (the Python worker)
  std::FILE* out = ::fdopen(fd, "w");
  if (!out) return 2;
  const Suite* suite = find_suite(file.suite);
  std::size_t log_sent = manager::OpLog::global().size();
  for (std::size_t i = start_row; i < file.rows.size(); ++i) {
    std::fprintf(out, "%s\n", event_line("row", "index", static_cast<long>(i)).c_str());
    std::fflush(out);  // the parent must know which row was running if we die
    for (const auto& r : run_row(*suite, file.rows[i], ctx)) std::fprintf(out, "%s\n", case_event(r).c_str());
    const auto entries = manager::OpLog::global().entries();
    for (; log_sent < entries.size(); ++log_sent) std::fprintf(out, "%s\n", oplog_event(entries[log_sent]).c_str());
    std::fflush(out);
  }
  std::fprintf(out, "%s\n", event_line("done").c_str());
  std::fclose(out);
  return 0;
}

}  // namespace crossdev::conformance
