// crossdev.MemoryStats: the one memory-statistics record (impl/device/memory_stats.h), returned by
// crossdev.manager.DeviceManager.memory_stats and crossdev.sim.memory_stats. Read-only fields
// with the C++ names; -1 where the source does not know.
#include <torch/extension.h>

#include "device/memory_stats.h"

namespace crossdev::python {
namespace py = pybind11;

void bind_memory_stats(py::module_& m) {
  py::class_<MemoryStats>(m, "MemoryStats", "Memory statistics of one device; -1 where the source does not know")
      .def_readonly("allocated", &MemoryStats::allocated, "bytes in live tensors")
      .def_readonly("reserved", &MemoryStats::reserved, "bytes held by the allocator, used or cached")
      .def_readonly("peak_allocated", &MemoryStats::peak_allocated)
      .def_readonly("peak_reserved", &MemoryStats::peak_reserved)
      .def_readonly("total", &MemoryStats::total, "capacity: the device's memory or a sim device's limit")
      .def_readonly("num_allocs", &MemoryStats::num_allocs)
      .def_readonly("num_frees", &MemoryStats::num_frees)
      .def_readonly("num_cache_hits", &MemoryStats::num_cache_hits)
      .def_readonly("live_blocks", &MemoryStats::live_blocks)
      .def_readonly("scope", &MemoryStats::scope)
      .def_readonly("source", &MemoryStats::source)
      .def_readonly("simulated", &MemoryStats::simulated)
      .def("__repr__", [](const MemoryStats& s) {
        return "MemoryStats(allocated=" + std::to_string(s.allocated) + ", reserved=" + std::to_string(s.reserved) +
               ", peak_allocated=" + std::to_string(s.peak_allocated) + ", total=" + std::to_string(s.total) +
               ", scope='" + s.scope + "', simulated=" + (s.simulated ? "True" : "False") + ")";
      });
}

}  // namespace crossdev::python
