#include "util/atomic_file.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <sys/stat.h>
#include <unistd.h>

namespace crossdev {
namespace {

namespace fs = std::filesystem;

std::string temp_prefix(const std::string& path) { return path + ".tmp."; }

// Creates and fills a unique temporary beside `path`; returns its name. Throws, leaving nothing.
std::string write_temporary(const std::string& path, std::string_view contents) {
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  std::string tmpl = temp_prefix(path) + std::to_string(::getpid()) + ".XXXXXX";
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw std::runtime_error("cannot write '" + path + "': cannot create a temporary file: " + std::strerror(errno));
  ::fchmod(fd, 0644);  // mkstemp creates 0600; a report is as readable as any file we write
  std::size_t done = 0;
  int err = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : ENOSPC;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) {
    ::unlink(tmpl.c_str());
    throw std::runtime_error("cannot write '" + path + "': " + std::strerror(err));
  }
  return tmpl;
}

}  // namespace

void write_file_atomically(const std::string& path, std::string_view contents) {
  write_files_atomically({{path, std::string(contents)}});
}

void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::string> temps;
  auto discard = [&](std::size_t from) {
    for (std::size_t i = from; i < temps.size(); ++i) ::unlink(temps[i].c_str());
  };
  try {
    for (const auto& [path, contents] : files) temps.push_back(write_temporary(path, contents));
  } catch (...) {
    discard(0);
    throw;
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (std::rename(temps[i].c_str(), files[i].first.c_str()) != 0) {
      const int err = errno;
      discard(i);
      throw std::runtime_error("cannot rename '" + temps[i] + "' to '" + files[i].first + "': " + std::strerror(err));
    }
  }
}

int remove_stale_temporaries(const std::string& path) noexcept {
  int removed = 0;
  try {
    const fs::path target(path);
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    const std::string prefix = target.filename().string() + ".tmp.";
    std::error_code ec;
    fs::directory_iterator it(dir, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.compare(0, prefix.size(), prefix) != 0) continue;
      // "<name>.tmp.<pid>[.XXXXXX]": keep it while its writer is alive (a concurrent run).
      char* after = nullptr;
      const long pid = std::strtol(name.c_str() + prefix.size(), &after, 10);
      if (pid > 0 && after != name.c_str() + prefix.size() && pid != ::getpid() &&
          (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM))
        continue;
      std::error_code rm;
      if (fs::remove(it->path(), rm)) ++removed;
    }
  } catch (...) {
  }
  return removed;
}

}  // namespace crossdev
