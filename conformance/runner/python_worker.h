#pragma once
// A Python worker: `python -m crossdev.worker` as a child of this engine process, for the rows of
// suites defined in Python (opinfo, models, claims). Protocol (docs/python-worker.md): JSON request
// lines on the child's stdin, one per request; one event per line on its stdout (runner/worker_events.h:
// plan, start, case, item, bad, runtime, fatal), each request's answer ending with `done`. The worker serves
// requests until its stdin closes, so one worker serves every Python row of a process
// (runner/python_rows.h `session_worker`); a one-shot worker (the runtime probe, the rows' check)
// gets its one request and its stdin closed at once.
//
// The child stays in this process's process group, so when `crossdev run` kills an isolation
// worker (its group: --row-timeout, SIGTERM) the Python worker goes with it; it also asks for
// SIGKILL when this process dies. The interpreter is $CROSSDEV_PYTHON (the `crossdev` command sets
// it to its own interpreter), else python3 on PATH; the crossdev package next to this engine (the
// wheel's, or the build tree's build/python) goes first on the child's PYTHONPATH.
#include <sys/types.h>

#include <string>

#include "runner/event_stream.h"
#include "runner/suite.h"
#include "util/json.h"

namespace crossdev::conformance {

// The fields every request carries so that the worker process is prepared as this engine is,
// before any suite code runs (crossdev.worker.prepare_process): "simulated_kinds" (the sim
// backend is registered first) and "libraries" (--load-library's paths, in order, loaded with
// torch.ops.load_library, so a user's kernels registered for a device are the ones judged) and
// "runtimes" (real kinds whose runtime the worker imports first: torch_xla, runner/python_runtimes.h).
// Call it inside the request's JSON object; every Python suite's request uses it.
void write_process_setup(json::Writer& w, const RunContext& ctx);

class PythonWorker {
 public:
  PythonWorker();  // a worker that waits for requests (send); throws std::runtime_error if it cannot start
  // A one-shot worker: `request_json` is its only request (its stdin is closed after it).
  explicit PythonWorker(const std::string& request_json);
  ~PythonWorker();
  PythonWorker(const PythonWorker&) = delete;
  PythonWorker& operator=(const PythonWorker&) = delete;

  // Writes one request line; false when the worker is gone (its exit status says why: finish).
  bool send(const std::string& request_json);
  bool running() const { return pid_ >= 0 && !reaped_ && events_.is_open(); }

  using Read = EventStream::Read;
  // The next event (runner/event_stream.h). End: the child closed its stdout (exited); Timeout: nothing
  // for timeout_s; Stopped: SIGINT/SIGTERM asked the run to stop.
  Read next_event(WorkerEvent* event, double timeout_s) { return events_.next(event, timeout_s); }
  // Kills the child if it still runs, reaps it, and says how it ended: "" for exit 0, else e.g.
  // "python worker was killed by signal 11 (SIGSEGV)" (runner/child_process.h describe_exit).
  std::string finish(bool kill_first);

 private:
  pid_t pid_ = -1;
  int in_fd_ = -1;
  EventStream events_;  // the child's stdout
  bool reaped_ = false;
};

std::string python_interpreter();  // $CROSSDEV_PYTHON, else "python3"

}  // namespace crossdev::conformance
