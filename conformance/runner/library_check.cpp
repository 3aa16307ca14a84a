#include "runner/library_check.h"

#include <cxxabi.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <memory>
#include <typeinfo>

#include <c10/util/Exception.h>

#include "runner/child_process.h"
#include "runner/event_stream.h"
#include "runner/worker_events.h"
#include "util/json.h"
#include "util/load_library.h"

namespace crossdev::conformance {
namespace {

std::string trim(const std::string& s) {
  const auto begin = s.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t\r") - begin + 1);
}

std::vector<std::string> nonempty_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    std::string line = trim(text.substr(start, end - start));
    if (!line.empty()) lines.push_back(std::move(line));
    start = end + 1;
  }
  return lines;
}

// One line out of a message that may span several: the first lines (c10's messages put the
// reason first and the backtrace after "Exception raised from"), joined, and capped.
std::string one_line(const std::string& text, std::size_t max_lines = 3, std::size_t max_chars = 2000) {
  const std::vector<std::string> lines = nonempty_lines(text.substr(0, text.find("Exception raised from")));
  std::string out;
  for (std::size_t i = 0; i < lines.size() && i < max_lines; ++i) out += (out.empty() ? "" : " ") + lines[i];
  if (out.size() > max_chars) out = out.substr(0, max_chars) + "...";
  return out;
}

std::string demangle(const char* name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free);
  return status == 0 && demangled ? demangled.get() : name;
}

// --- the child ------------------------------------------------------------------------------

// What the child is loading, for the terminate and fatal-signal handlers (set before each dlopen).
std::string g_loading;
// The `fatal` event a crash writes, up to how it ended: {"event":"fatal","message":"cannot load 'PATH': the
// process loading it  (JSON-escaped in advance: the handler may only write; describe_signal's words follow).
std::string g_crash_head;

void write_event(const std::string& line) {
  const std::string text = line + "\n";
  (void)!::write(STDERR_FILENO, text.data(), text.size());
}

[[noreturn]] void report_and_exit(const std::string& message) {
  std::cerr.flush();
  std::cout.flush();
  std::fflush(nullptr);
  json::Writer w(0);
  w.begin_object().field("event", "fatal").field("message", message).end_object();
  write_event(w.str());
  ::_exit(2);
}

[[noreturn]] void on_terminate() {
  std::string what = "std::terminate was called with no exception in flight";
  if (std::exception_ptr current = std::current_exception()) {
    const std::type_info* type = abi::__cxa_current_exception_type();
    const std::string type_name = type != nullptr ? demangle(type->name()) : "an exception of unknown type";
    try {
      std::rethrow_exception(current);
    } catch (const c10::Error& e) {
      what = "threw " + type_name + ": " + one_line(e.what_without_backtrace());
    } catch (const std::exception& e) {
      what = "threw " + type_name + ": " + one_line(e.what());
    } catch (...) {
      what = "threw " + type_name;
    }
  }
  if (g_loading.empty()) report_and_exit("std::terminate outside any library's loading: " + what);
  report_and_exit("cannot load '" + g_loading + "': its static initialisation " + what);
}

void on_fatal_signal(int sig) {  // async-signal-safe: write and _exit only
  if (!g_crash_head.empty()) {
    (void)!::write(STDERR_FILENO, g_crash_head.data(), g_crash_head.size());
    char how[64];
    describe_signal(sig, how, sizeof how);
    (void)!::write(STDERR_FILENO, how, std::strlen(how));
    static const char kTail[] = " while loading it\"}\n";
    (void)!::write(STDERR_FILENO, kTail, sizeof(kTail) - 1);
    ::_exit(2);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

int load_check_main(const std::vector<std::string>& paths) {
  die_with_parent(2);  // a check does not outlive the run that asked for it
  std::set_terminate(on_terminate);
  struct sigaction action {};
  action.sa_handler = on_fatal_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) ::sigaction(sig, &action, nullptr);
  for (const std::string& path : paths) {
    g_loading = path;
    g_crash_head = "{\"event\":\"fatal\",\"message\":\"" +
                   json::escape("cannot load '" + path + "': the process loading it ");
    json::Writer loading(0);
    loading.begin_object().field("event", "loading").field("path", path).end_object();
    write_event(loading.str());
    try {
      (void)load_library_paths({path});
    } catch (const LoadLibraryError& e) {
      report_and_exit(one_line(e.what(), 3));
    } catch (const c10::Error& e) {  // an initialiser's exception that did reach dlopen's caller
      report_and_exit("cannot load '" + path + "': its static initialisation threw c10::Error: " +
                      one_line(e.what_without_backtrace()));
    } catch (const std::exception& e) {
      report_and_exit("cannot load '" + path + "': its static initialisation threw " + demangle(typeid(e).name()) +
                      ": " + one_line(e.what()));
    }
  }
  g_loading.clear();
  g_crash_head.clear();
  std::cerr.flush();
  return 0;
}

void check_libraries_in_child(const std::vector<std::string>& argv, double timeout_s) {
  if (argv.empty()) throw std::invalid_argument("check_libraries_in_child: empty argv");
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw LoadLibraryError(std::string("cannot check the libraries in a child process: pipe: ") + std::strerror(errno));
  const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ChildSpec spec;
  spec.argv = argv;
  spec.env = child_environment();
  spec.close_first = {fds[0]};
  spec.dup2s = {{devnull, STDIN_FILENO}, {fds[1], STDOUT_FILENO}, {fds[1], STDERR_FILENO}};
  pid_t pid = -1;
  const int spawn_error = devnull < 0 ? errno : spawn_child(spec, &pid);
  if (devnull >= 0) ::close(devnull);
  ::close(fds[1]);
  if (spawn_error != 0) {
    ::close(fds[0]);
    throw LoadLibraryError("cannot check the libraries in a child process: cannot run '" + argv[0] +
                           "': " + std::strerror(spawn_error));
  }

  // Everything the child prints (a library may print while it loads), up to 1 MiB, the tail kept.
  constexpr std::size_t kMaxOutput = std::size_t{1} << 20;
  std::string output, printed;
  const auto keep = [&](const std::string& text) {
    output += text;
    output += '\n';
    if (output.size() > kMaxOutput) output.erase(0, output.size() - kMaxOutput);
  };
  EventStream stream(fds[0]);  // every line: what the libraries print is kept with the events
  const auto take_what_is_there = [&] {
    while (stream.next_line(&printed, 0, /*stoppable=*/false) == EventStream::Read::Event) keep(printed);
  };
  bool timed_out = false, reaped = false;
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (bool reading = true; reading;) {
    const double left_s = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    if (left_s <= 0) {
      timed_out = true;
      break;
    }
    switch (stream.next_line(&printed, std::min(left_s, 0.25), /*stoppable=*/false)) {
      case EventStream::Read::Event: keep(printed); break;
      case EventStream::Read::Timeout:
        // The child may have exited while something it started keeps the pipe open: take what is there and
        // stop waiting.
        if (child_ended(pid, &status)) {
          reaped = true;
          take_what_is_there();
          stream.close();
          take_what_is_there();  // a last line without its newline
          reading = false;
        }
        break;
      default: reading = false; break;  // End: the child (and anything it started) closed its output
    }
  }
  stream.close();
  if (!reaped) status = wait_child(pid, /*kill_first=*/timed_out);
  if (!timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0) return;

  std::string loading, error;
  std::vector<std::string> other;  // what the libraries printed
  for (const std::string& line : nonempty_lines(output)) {
    const auto event = read_event(line);
    if (event && event->name == "loading") {
      loading = event->body.string_or("path");
    } else if (event && event->name == "fatal") {
      error = event->body.string_or("message");
    } else {
      other.push_back(line);
    }
  }
  if (!error.empty() && !timed_out) throw LoadLibraryError(error);
  std::string tail;
  for (std::size_t i = other.size() > 3 ? other.size() - 3 : 0; i < other.size(); ++i) tail += (tail.empty() ? "" : " | ") + other[i];
  if (tail.size() > 1000) tail = "..." + tail.substr(tail.size() - 1000);
  const std::string how = timed_out ? "was still loading it after " + std::to_string(static_cast<long long>(timeout_s)) + " s"
                                    : describe_exit(status, "");
  const std::string last = tail.empty() ? "" : "; its last output: " + tail;
  if (!loading.empty()) throw LoadLibraryError("cannot load '" + loading + "': the process loading it " + how + last);
  throw LoadLibraryError("cannot check the libraries in a child process: '" + argv[0] + "' " + how + last);
}

}  // namespace crossdev::conformance
