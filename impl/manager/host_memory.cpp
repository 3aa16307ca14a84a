#include "manager/host_memory.h"

#include <fstream>
#include <sstream>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace crossdev::manager {
namespace {

// "VmHWM:     123456 kB" -> bytes; -1 when the key is absent.
long long read_kb_field(const char* path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0 || line.size() <= key.size() || line[key.size()] != ':') continue;
    std::istringstream fields(line.substr(key.size() + 1));
    long long kb = -1;
    fields >> kb;
    return kb < 0 ? -1 : kb * 1024;
  }
  return -1;
}

}  // namespace

HostMemorySample sample_host_memory() {
  HostMemorySample s;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 info = mallinfo2();
  s.malloc_in_use = static_cast<long long>(info.uordblks + info.hblkhd);
  s.malloc_held = static_cast<long long>(info.arena + info.hblkhd);
#endif
  s.peak_rss = read_kb_field("/proc/self/status", "VmHWM");
  s.total = read_kb_field("/proc/meminfo", "MemTotal");
  return s;
}

long long trim_host_heap() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const long long before = sample_host_memory().malloc_held;
  malloc_trim(0);
  const long long after = sample_host_memory().malloc_held;
  return before >= after ? before - after : 0;
#else
  return -1;
#endif
}

std::string host_cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    std::string name = line.substr(colon + 1);
    while (!name.empty() && name.front() == ' ') name.erase(name.begin());
    if (!name.empty()) return name;
  }
  return "host CPU";
}

}  // namespace crossdev::manager
