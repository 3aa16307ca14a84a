#pragma once
// The one way the engine waits on a child: the events (runner/worker_events.h) it writes to a pipe, read one
// at a time. Each read ends with the next event, the end of the child's output, a timeout, or a stop
// (SIGINT/SIGTERM asked the run to stop, runner/interrupt.h). A line that is no event is skipped, never
// taken for a result. Used for the isolation workers (fd 3), the Python workers (stdout) and the library check
// (runner/library_check.h: its child's every line, what the libraries printed too). The child is waited for by
// runner/child_process.h's wait_child.
#include <string>

#include "runner/worker_events.h"

namespace crossdev::conformance {

class EventStream {
 public:
  explicit EventStream(int fd = -1) : fd_(fd) {}  // takes the read end of the child's pipe
  ~EventStream() { close(); }
  EventStream(const EventStream&) = delete;
  EventStream& operator=(const EventStream&) = delete;

  enum class Read { Event, End, Timeout, Stopped };
  // The next event, waiting at most timeout_s seconds (0 or less: only what is there). End: the child closed
  // its output (it exited); Stopped is never answered when `stoppable` is false (a worker that has sent
  // `done` is read to its end whatever the signals).
  Read next(WorkerEvent* event, double timeout_s, bool stoppable = true);
  // The next line, an event or not, waiting as `next` does (Read::Event: *line holds it, without its newline).
  Read next_line(std::string* line, double timeout_s, bool stoppable = true);
  void attach(int fd);  // reads `fd` from now on (what was attached before is closed)
  // Stops reading the child's output; the lines already read are still answered (a last one without its
  // newline too), then End.
  void close();
  bool is_open() const { return fd_ >= 0; }

 private:
  bool take_line(std::string* line);
  int fd_;
  std::string buffer_;
};

}  // namespace crossdev::conformance
