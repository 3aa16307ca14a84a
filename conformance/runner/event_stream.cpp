#include "runner/event_stream.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "runner/interrupt.h"

namespace crossdev::conformance {

bool EventStream::take_line(std::string* line) {
  const std::size_t nl = buffer_.find('\n');
  if (nl == std::string::npos) return false;
  *line = buffer_.substr(0, nl);
  buffer_.erase(0, nl + 1);
  return true;
}

EventStream::Read EventStream::next(WorkerEvent* event, double timeout_s, bool stoppable) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  std::string line;
  for (;;) {
    const double left_s = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    const Read read = next_line(&line, left_s, stoppable);
    if (read != Read::Event) return read;
    if (auto e = read_event(line)) {
      *event = std::move(*e);
      return Read::Event;
    }
  }
}

EventStream::Read EventStream::next_line(std::string* line, double timeout_s, bool stoppable) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    if (take_line(line)) return Read::Event;
    if (fd_ < 0) return Read::End;
    if (stoppable && stop_signal() != 0) return Read::Stopped;
    const double left_s = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    const int stop = stoppable ? stop_fd() : -1;
    pollfd p[2] = {{fd_, POLLIN, 0}, {stop, POLLIN, 0}};
    const int ready = ::poll(p, stop >= 0 ? 2 : 1, left_s <= 0 ? 0 : static_cast<int>(left_s * 1000) + 1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    }
    if (ready == 0) return Read::Timeout;
    if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;  // only the stop pipe: checked above
    char chunk[65536];
    const ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close();
      continue;
    }
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

void EventStream::attach(int fd) {
  close();
  buffer_.clear();
  fd_ = fd;
}

void EventStream::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!buffer_.empty() && buffer_.back() != '\n') buffer_ += '\n';  // a last line without its newline
}

}  // namespace crossdev::conformance
