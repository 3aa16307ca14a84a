#pragma once
// The honest CPU memory source. LibTorch's CPU allocator keeps no statistics (c10's
// ProfiledCPUMemoryReporter only counts while the profiler runs), and replacing the
// allocator is out of scope, so CPU numbers describe the whole PROCESS, not tensors alone:
//   allocated  glibc mallinfo2(): uordblks + hblkhd — bytes currently malloc'd, all arenas
//              (DefaultCPUAllocator uses posix_memalign, so tensor storage is included)
//   reserved   glibc mallinfo2(): arena + hblkhd — bytes malloc holds from the OS
//   peak       /proc/self/status VmHWM — the process's peak resident set
//   total      /proc/meminfo MemTotal
// Each field is -1 where the source is unavailable (non-glibc, no /proc).
#include <string>

namespace crossdev::manager {

struct HostMemorySample {
  long long malloc_in_use = -1;
  long long malloc_held = -1;
  long long peak_rss = -1;
  long long total = -1;
};

HostMemorySample sample_host_memory();

// malloc_trim(0): return free heap memory to the OS. Returns bytes released (held before -
// held after), or -1 where unsupported.
long long trim_host_heap();

std::string host_cpu_name();  // /proc/cpuinfo "model name", or "host CPU"

}  // namespace crossdev::manager
