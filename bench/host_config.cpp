#include "host_config.h"

#include <climits>
#include <cstdlib>
#include <fstream>
#include <sstream>

#if defined(__linux__)
#include <sched.h>
#endif
#include <sys/resource.h>

namespace crossdev::bench {
namespace {

std::string real_path(const std::string& path) {
  char resolved[PATH_MAX];
  return realpath(path.c_str(), resolved) != nullptr ? std::string(resolved) : path;
}

// Whether `path` (a mapped library) is one of LD_PRELOAD's entries (':' or ' ' separated, symlinks resolved).
bool preloaded(const std::string& path) {
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload == nullptr) return false;
  std::string entries(preload);
  for (char& c : entries) c = c == ':' ? ' ' : c;
  std::istringstream in(entries);
  const std::string target = real_path(path);
  for (std::string entry; in >> entry;) {
    if (real_path(entry) == target) return true;
  }
  return false;
}

}  // namespace

std::string allocator_label() {
  static const char* const kKnown[] = {"tcmalloc", "jemalloc", "mimalloc"};
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const auto slash = line.rfind('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(line.find('/'));
    const std::string base = line.substr(slash + 1);
    for (const char* name : kKnown) {
      if (base.rfind(std::string("lib") + name, 0) == 0 || base.rfind(name, 0) == 0) {
        return std::string(name) + " (" + path + ", " + (preloaded(path) ? "LD_PRELOAD" : "linked") + ")";
      }
    }
  }
  return "system (glibc malloc)";
}

std::string cpu_affinity() {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return "unknown";
  std::string out;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    if (!out.empty()) out += ',';
    out += std::to_string(cpu);
  }
  return out;
#else
  return "unknown";
#endif
}

PageFaults page_faults() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return {};
  return {static_cast<std::uint64_t>(usage.ru_minflt), static_cast<std::uint64_t>(usage.ru_majflt)};
}

}  // namespace crossdev::bench
