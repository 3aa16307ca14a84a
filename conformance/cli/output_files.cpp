#include "cli/output_files.h"

#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>

#include "cli/args.h"
#include "util/atomic_file.h"

namespace crossdev::cli {
namespace fs = std::filesystem;

void check_output_path(const std::string& option, const std::string& path, std::uintmax_t needed_bytes) {
  const auto bad = [&](const std::string& what) { throw UsageError(option + ": '" + path + "': " + what); };
  if (path.empty()) bad("empty path; expected a file path");
  const fs::path target(path);
  std::error_code ec;
  if (fs::is_directory(target, ec)) bad("is a folder; expected a file path");
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  fs::create_directories(dir, ec);
  if (ec) bad("cannot create the folder '" + dir.string() + "': " + ec.message());
  if (!fs::is_directory(dir, ec)) bad("'" + dir.string() + "' is not a folder");
  remove_stale_temporaries(path);
  // A probe file beside the target: access() would not see a read-only mount, ACLs or quotas.
  std::string probe = (dir / (target.filename().string() + ".tmp." + std::to_string(::getpid()) + ".XXXXXX")).string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) bad("cannot create files in the folder '" + dir.string() + "': " + std::strerror(errno) + "; expected a writable folder");
  ::close(fd);
  ::unlink(probe.c_str());
  struct statvfs st{};
  if (::statvfs(dir.c_str(), &st) == 0 && st.f_frsize > 0) {
    const std::uintmax_t free_bytes = static_cast<std::uintmax_t>(st.f_bavail) * st.f_frsize;
    if (free_bytes < needed_bytes) {
      bad("only " + std::to_string(free_bytes) + " bytes free in '" + dir.string() + "'; the results need about " +
          std::to_string(needed_bytes) + " bytes (free some space or write elsewhere)");
    }
  }
}

std::string write_outputs(const std::vector<OutputFile>& files, const std::string& run_id) {
  if (files.empty()) return "";
  std::vector<std::pair<std::string, std::string>> set;
  for (const auto& f : files) set.emplace_back(f.path, f.contents);
  std::string failure;
  try {
    write_files_atomically(set);
    return "";
  } catch (const std::exception& e) {
    failure = e.what();
  }
  // Keep the results: the same set in a folder that has room.
  std::vector<std::string> dirs;
  if (const char* tmp = std::getenv("TMPDIR"); tmp && *tmp) dirs.emplace_back(tmp);
  dirs.emplace_back("/tmp");
  for (const auto& dir : dirs) {
    std::vector<std::pair<std::string, std::string>> moved;
    std::string where;
    for (const auto& f : files) {
      const std::string p = (fs::path(dir) / ("crossdev-" + run_id + "-" + fs::path(f.path).filename().string())).string();
      moved.emplace_back(p, f.contents);
      where += (where.empty() ? "" : ", ") + f.option + " '" + p + "'";
    }
    try {
      write_files_atomically(moved);
      return failure + "; the results were written to " + where + " instead";
    } catch (const std::exception&) {
    }
  }
  return failure + "; the results could not be written anywhere (also tried $TMPDIR and /tmp)";
}

}  // namespace crossdev::cli
