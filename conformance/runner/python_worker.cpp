#include "runner/python_worker.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "device/device_kind.h"
#include "runner/child_process.h"
#include "runner/python_runtimes.h"


namespace crossdev::conformance {
namespace {

namespace fs = std::filesystem;

// The folder holding the `crossdev` package that belongs to this engine: the wheel's
// site-packages (crossdev/bin/crossdev), or the build tree's python/ mirror (build/bin/crossdev).
std::string package_parent_dir() {
  std::error_code ec;
  const fs::path bin = fs::read_symlink("/proc/self/exe", ec).parent_path();
  if (ec) return "";
  if (fs::exists(bin.parent_path() / "__init__.py", ec)) return bin.parent_path().parent_path().string();
  if (fs::exists(bin.parent_path() / "python" / "crossdev" / "__init__.py", ec)) return (bin.parent_path() / "python").string();
  return "";
}

// This process's environment with this engine's package first on PYTHONPATH (child_process.h).
std::vector<std::string> python_child_environment() {
  std::string pythonpath = package_parent_dir();
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) {
    if (!pythonpath.empty()) pythonpath += ':';
    pythonpath += old;
  }
  return child_environment(pythonpath.empty() ? std::vector<std::string>{} : std::vector<std::string>{"PYTHONPATH=" + pythonpath});
}

bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;  // the child died early: its exit status tells why
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

void write_process_setup(json::Writer& w, const RunContext& ctx) {
  w.key("libraries").begin_array();
  for (const auto& lib : ctx.libraries) w.value(lib);
  w.end_array();
  w.key("simulated_kinds").begin_array();
  for (DeviceKind kind : kAllDeviceKinds)
    if (ctx.host.provenance(kind) == Provenance::Simulated) w.value(kind_name(kind));
  w.end_array();
  // Real kinds whose runtime is a Python package: the worker imports it for a case on that kind.
  w.key("runtimes").begin_array();
  for (const auto& r : python_runtime_reports())
    if (r.real && ctx.host.provenance(r.kind) == Provenance::Real) w.value(kind_name(r.kind));
  w.end_array();
}

std::string python_interpreter() {
  const char* python = std::getenv("CROSSDEV_PYTHON");
  return python && *python ? python : "python3";
}

PythonWorker::PythonWorker() {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  const std::string python = python_interpreter();
  ChildSpec spec;
  spec.argv = {python, "-m", "crossdev.worker"};
  spec.env = python_child_environment();
  spec.dup2s = {{in[0], 0}, {out[1], 1}};
  spec.search_path = true;  // in this process's group: a kill of an isolation worker's group takes it too
  const int rc = spawn_child(spec, &pid_);
  ::close(in[0]);
  ::close(out[1]);
  if (rc != 0) {
    ::close(in[1]);
    ::close(out[0]);
    pid_ = -1;
    throw std::runtime_error("cannot start the Python worker '" + python +
                             " -m crossdev.worker' (set CROSSDEV_PYTHON to the interpreter that has torch): " +
                             std::strerror(rc));
  }
  events_.attach(out[0]);
  in_fd_ = in[1];
}

PythonWorker::PythonWorker(const std::string& request_json) : PythonWorker() {
  send(request_json);
  ::close(in_fd_);
  in_fd_ = -1;
}

PythonWorker::~PythonWorker() { finish(true); }

bool PythonWorker::send(const std::string& request_json) {
  if (in_fd_ < 0 || !running()) return false;
  // A child that died before reading must not kill us with SIGPIPE.
  struct sigaction ignore {}, previous {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &previous);
  const bool written = write_all(in_fd_, request_json + "\n");
  ::sigaction(SIGPIPE, &previous, nullptr);
  return written;
}

std::string PythonWorker::finish(bool kill_first) {
  if (in_fd_ >= 0) {  // end of requests: a waiting worker exits 0
    ::close(in_fd_);
    in_fd_ = -1;
  }
  events_.close();
  if (reaped_ || pid_ < 0) return "";
  const int status = wait_child(pid_, kill_first);
  reaped_ = true;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  return describe_exit(status, "python worker");
}

}  // namespace crossdev::conformance
