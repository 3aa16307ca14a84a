"""What a benchmark figure depends on besides the kernel: allocator, threads, affinity, CPU capability.

Every bench JSON records these in its context (issue 13), so two runs are compared only when they
were made the same way. Linux reads /proc/self/maps; elsewhere the allocator is "system".
"""
import os
import pathlib

# Allocator libraries recognised in the process's mappings (LD_PRELOAD puts them there), first match wins.
_ALLOCATORS = (("tcmalloc", "tcmalloc"), ("jemalloc", "jemalloc"), ("mimalloc", "mimalloc"))
SYSTEM_ALLOCATOR = "system"
TCMALLOC_PATHS = ("/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4", "/usr/lib/aarch64-linux-gnu/libtcmalloc_minimal.so.4",
                  "/usr/lib64/libtcmalloc_minimal.so.4", "/usr/lib/libtcmalloc_minimal.so.4")
# Environment variables that change how OpenMP places ATen's threads.
AFFINITY_ENV = ("OMP_NUM_THREADS", "OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY", "KMP_AFFINITY")


def allocator(maps_text=None):
    """(name, library path): the malloc that serves this process, e.g. ("tcmalloc", "/usr/lib/.../libtcmalloc_minimal.so.4")."""
    if maps_text is None:
        try:
            maps_text = pathlib.Path("/proc/self/maps").read_text(encoding="utf-8", errors="replace")
        except OSError:
            maps_text = ""
    for line in maps_text.splitlines():
        path = line.split()[-1] if line.split() else ""
        base = os.path.basename(path)
        for needle, name in _ALLOCATORS:
            if base.startswith("lib" + needle) or base.startswith(needle):
                return name, path
    return SYSTEM_ALLOCATOR, "libc malloc"


def allocator_label(maps_text=None, preload=None):
    name, path = allocator(maps_text)
    if name == SYSTEM_ALLOCATOR:
        return "system (glibc malloc)"
    preload = os.environ.get("LD_PRELOAD", "") if preload is None else preload
    preloaded = {os.path.realpath(p) for p in preload.replace(":", " ").split()}
    how = "LD_PRELOAD" if os.path.realpath(path) in preloaded else "linked"
    return f"{name} ({path}, {how})"


def find_tcmalloc():
    """The tcmalloc library to LD_PRELOAD (Debian libtcmalloc-minimal4), or None."""
    return next((p for p in TCMALLOC_PATHS if os.path.exists(p)), None)


def affinity():
    """The CPUs this process may run on, as "0,1" (the threads ATen starts inherit it)."""
    try:
        return ",".join(str(c) for c in sorted(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return "unknown"


def parse_cpu_list(text):
    """"0-3,6" -> {0, 1, 2, 3, 6}; ValueError with the reason on bad input."""
    cpus = set()
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            raise ValueError(f"'{text}': empty CPU entry; expected a list such as 0,1 or 0-3")
        lo, sep, hi = part.partition("-")
        if not lo.isdigit() or (sep and not hi.isdigit()):
            raise ValueError(f"'{text}': '{part}' is not a CPU number or range; expected a list such as 0,1 or 0-3")
        first, last = int(lo), int(hi) if sep else int(lo)
        if last < first:
            raise ValueError(f"'{text}': range '{part}' runs backwards")
        cpus.update(range(first, last + 1))
    return cpus


def context(torch):
    """The context keys every crossdev bench JSON carries about the host configuration."""
    env = {k: os.environ[k] for k in AFFINITY_ENV if k in os.environ}
    return {
        "crossdev_allocator": allocator_label(),
        "crossdev_aten_threads": str(torch.get_num_threads()),
        "crossdev_affinity": affinity(),
        "crossdev_thread_env": ", ".join(f"{k}={v}" for k, v in env.items()) or "none set",
        "crossdev_cpu_capability": str(torch.backends.cpu.get_cpu_capability()),
        "crossdev_torch": torch.__version__,
    }
