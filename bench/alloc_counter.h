#pragma once
// Heap allocations made through global operator new, counted process-wide. The bench binary
// replaces operator new/delete (alloc_counter.cpp) so that a benchmark can report
// `allocs_per_op`; the foundation's target for resolve() is zero on the hot path.
#include <cstdint>

namespace crossdev::bench {

// Allocations (operator new calls, any thread) since the process started.
std::uint64_t heap_allocations() noexcept;

}  // namespace crossdev::bench
