#pragma once
// The `sim` device: a real PrivateUse1 backend with host-memory storage, registered under the
// name "sim" (tensors print as sim:0). Include this header to use it from C++:
//
//   crossdev::sim::register_backend();                 // idempotent, thread-safe
//   crossdev::sim::set_profile(ProfileId::CudaLike, 2); // sim:0, sim:1 behave like CUDA devices
//   at::Tensor t = at::ones({2, 3}, at::device(crossdev::sim::sim_device(1)));
//
// Registration is explicit (not static initialisers) so it works from a static library and
// happens exactly once, before Python or C++ code first names the device.
#include <c10/core/Device.h>

#include "sim/emulation_profile.h"
#include "sim/sim_allocator.h"
#include "sim/sim_config.h"
#include "sim/sim_cpu_delegate.h"

namespace crossdev::sim {

inline constexpr const char* kBackendName = "sim";

// c10::register_privateuse1_backend("sim"), allocator, device guard, hooks, native kernels and
// CPU delegation (sim_cpu_delegate.h). Throws c10::Error when PrivateUse1 is already taken by another name.
void register_backend();
bool backend_registered() noexcept;

// sim:<index> (registers the backend first). The index is checked when the device is used.
c10::Device sim_device(int index = 0);

// Memory statistics of the allocator (see sim_allocator.h for the exact semantics).
inline MemoryStats memory_stats(int device = 0) { return SimAllocator::instance().stats(device); }
inline void reset_peak_memory_stats(int device = 0) { SimAllocator::instance().reset_peak_stats(device); }
inline void empty_cache() { SimAllocator::instance().empty_cache(); }

}  // namespace crossdev::sim
