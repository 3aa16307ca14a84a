// What a benchmark figure depends on besides the kernel (issue 13): the allocator serving this
// process, the CPUs it may run on, and its page faults. bench/python/host_config.py is the Python
// twin; both write the same context keys (crossdev_allocator, crossdev_affinity, ...).
#pragma once

#include <cstdint>
#include <string>

namespace crossdev::bench {

// "system (glibc malloc)", or e.g. "tcmalloc (/usr/lib/.../libtcmalloc_minimal.so.4, LD_PRELOAD)"
// when a known allocator library is mapped into the process (Linux: /proc/self/maps).
std::string allocator_label();

// The CPUs this process may run on, "0,1" ("unknown" where sched_getaffinity is unavailable).
std::string cpu_affinity();

struct PageFaults {
  std::uint64_t minor = 0;
  std::uint64_t major = 0;
};

// The process's page faults so far (getrusage RUSAGE_SELF: every thread).
PageFaults page_faults();

}  // namespace crossdev::bench
