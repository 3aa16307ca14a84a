#pragma once
// The fused CPU kernels of an op, one copy per capability, in the manner of ATen's DispatchStub
// (aten/src/ATen/native/DispatchStub.h): each capability's copy of <op>/fused_cpu.cpp defines
// its own entry, a constant-initialized pair of function pointers in its own CPU_CAPABILITY
// namespace (CROSSDEV_REGISTER_CPU_KERNELS), and a call runs the entry of the highest capability
// not above cpu_capability() (capability.h).
//
//   kernels.h     CROSSDEV_DECLARE_OP_KERNELS(<op>) in namespace crossdev::ops::<op>: fallback,
//                 the per-capability entries (<op>::crossdev_default::cpu_kernels, ...),
//                 fused_cpu / fused_backward_cpu, and the CUDA kernels' declarations when built
//   fused_cpu.cpp namespace <op>::CPU_CAPABILITY { at::Tensor forward(...); ... }
//                 CROSSDEV_REGISTER_CPU_KERNELS(<op>, forward, backward)
//   op.cpp        def.fused_cpu = <op>::fused_cpu;  (a plain KernelFn)
//
// No symbol is shared between the copies, so the one-definition rule holds although each copy is
// compiled with its own -m flags: every inline function a copy compiles from crossdev's headers
// lives in that copy's CPU_CAPABILITY namespace (crossdev_default, crossdev_avx2, crossdev_avx512;
// impl/ops/CMakeLists.txt sets the macro per copy), as at::vec's does, and the entries are
// strong definitions, one per copy, with no dynamic initializer, so loading the library runs no
// code compiled for a wider instruction set. fused_cpu / fused_backward_cpu and the table of
// entries they read are defined once, by the DEFAULT copy (baseline flags).
// tests/gtest/ops/check_capability_symbols.py checks it.
//
// CROSSDEV_CPU_HAVE_AVX2 / CROSSDEV_CPU_HAVE_AVX512: set on the copies by impl/ops/CMakeLists.txt
// when that copy is built, as ATen's HAVE_AVX2_CPU_DEFINITION; an entry not built is never referenced.
#include <c10/util/Exception.h>

#include "ops/cpu/capability.h"
#include "ops/op_definition.h"

namespace crossdev::ops::cpu {

// One capability's copy of an op's fused CPU kernels.
struct CpuKernelEntry {
  KernelFn forward;
  BackwardFn backward;
};

// Entries by capability (nullptr where that copy is not built); entry 0, DEFAULT, always is.
using CpuKernelEntries = const CpuKernelEntry* const[kCpuCapabilities];

}  // namespace crossdev::ops::cpu

// In a fused_cpu.cpp, at namespace scope outside any namespace: this copy's entry, a strong
// definition (declared extern by the op's kernels.h) initialized by constants.
#define CROSSDEV_REGISTER_CPU_KERNELS(op, forward_fn, backward_fn)                  \
  namespace crossdev::ops::op::CPU_CAPABILITY {                                      \
  extern const ::crossdev::ops::cpu::CpuKernelEntry cpu_kernels;                     \
  const ::crossdev::ops::cpu::CpuKernelEntry cpu_kernels{forward_fn, backward_fn};   \
  }                                                                                  \
  CROSSDEV_DEFINE_OP_CPU_DISPATCH_(op)

#if CROSSDEV_CPU_HAVE_AVX2
#define CROSSDEV_DECLARE_CPU_ENTRY_AVX2_ \
  namespace crossdev_avx2 {              \
  extern const ::crossdev::ops::cpu::CpuKernelEntry cpu_kernels; \
  }
#define CROSSDEV_CPU_ENTRY_AVX2_ &crossdev_avx2::cpu_kernels
#else
#define CROSSDEV_DECLARE_CPU_ENTRY_AVX2_
#define CROSSDEV_CPU_ENTRY_AVX2_ nullptr
#endif
#if CROSSDEV_CPU_HAVE_AVX512
#define CROSSDEV_DECLARE_CPU_ENTRY_AVX512_ \
  namespace crossdev_avx512 {              \
  extern const ::crossdev::ops::cpu::CpuKernelEntry cpu_kernels; \
  }
#define CROSSDEV_CPU_ENTRY_AVX512_ &crossdev_avx512::cpu_kernels
#else
#define CROSSDEV_DECLARE_CPU_ENTRY_AVX512_
#define CROSSDEV_CPU_ENTRY_AVX512_ nullptr
#endif

namespace crossdev::ops::cpu {
inline namespace CPU_CAPABILITY {

// The capability whose entry a call runs now: the highest not above cpu_capability() that is built.
inline CpuCapability running_capability(const CpuKernelEntries& entries) {
  for (int c = static_cast<int>(cpu_capability()); c >= 0; --c) {
    if (entries[c] != nullptr) return static_cast<CpuCapability>(c);
  }
  return CpuCapability::Default;
}
inline const CpuKernelEntry& pick(const CpuKernelEntries& entries, const char* op) {
  const CpuKernelEntry* entry = entries[static_cast<int>(running_capability(entries))];
  TORCH_CHECK(entry != nullptr, "crossdev: no fused CPU kernel registered for ", op);
  return *entry;
}

}  // namespace CPU_CAPABILITY
}  // namespace crossdev::ops::cpu

// <op>::fused_cpu and fused_backward_cpu, defined once, by the DEFAULT copy (compiled for every
// CPU), with the table of entries local to it: a table in a header would be compiled by every
// file that includes the op's kernels.h, each with its own idea of which copies exist.
#if defined(CROSSDEV_CPU_CAPABILITY_INDEX) && CROSSDEV_CPU_CAPABILITY_INDEX == 0
#define CROSSDEV_DEFINE_OP_CPU_DISPATCH_(op)                                                         \
  namespace crossdev::ops::op {                                                                      \
  namespace {                                                                                        \
  constexpr ::crossdev::ops::cpu::CpuKernelEntries cpu_kernel_entries = {                           \
      &crossdev_default::cpu_kernels, CROSSDEV_CPU_ENTRY_AVX2_, CROSSDEV_CPU_ENTRY_AVX512_};        \
  }                                                                                                  \
  at::Tensor fused_cpu(const ::crossdev::ops::OpCall& call) {                                        \
    return ::crossdev::ops::cpu::pick(cpu_kernel_entries, #op).forward(call);                        \
  }                                                                                                  \
  std::vector<at::Tensor> fused_backward_cpu(const ::crossdev::ops::OpCall& call, const at::Tensor& grad_out) { \
    const ::crossdev::ops::cpu::CpuKernelEntry& entry = ::crossdev::ops::cpu::pick(cpu_kernel_entries, #op); \
    TORCH_CHECK(entry.backward != nullptr, "crossdev: no fused CPU backward registered for ", #op);  \
    return entry.backward(call, grad_out);                                                           \
  }                                                                                                  \
  }
#else
#define CROSSDEV_DEFINE_OP_CPU_DISPATCH_(op)
#endif

#ifdef CROSSDEV_OPS_WITH_CUDA
#define CROSSDEV_DECLARE_OP_CUDA_KERNELS_                \
  at::Tensor fused_cuda(const ::crossdev::ops::OpCall& call); \
  std::vector<at::Tensor> fused_backward_cuda(const ::crossdev::ops::OpCall& call, const at::Tensor& grad_out);
#else
#define CROSSDEV_DECLARE_OP_CUDA_KERNELS_
#endif

// An op's kernels, declared once in its kernels.h inside namespace crossdev::ops::<op> (like ATen's
// DECLARE_DISPATCH): the fallback composition (fallback.cpp); the fused CPU kernels, one entry per
// instruction set (fused_cpu.cpp, CROSSDEV_REGISTER_CPU_KERNELS), chosen at run time by
// fused_cpu / fused_backward_cpu; and the fused CUDA kernels (<op>.cu) when they are built.
#define CROSSDEV_DECLARE_OP_KERNELS(op)                                  \
  at::Tensor fallback(const ::crossdev::ops::OpCall& call);               \
  namespace crossdev_default {                                           \
  extern const ::crossdev::ops::cpu::CpuKernelEntry cpu_kernels;         \
  }                                                                      \
  CROSSDEV_DECLARE_CPU_ENTRY_AVX2_                                       \
  CROSSDEV_DECLARE_CPU_ENTRY_AVX512_                                     \
  at::Tensor fused_cpu(const ::crossdev::ops::OpCall& call);             \
  std::vector<at::Tensor> fused_backward_cpu(const ::crossdev::ops::OpCall& call, const at::Tensor& grad_out); \
  CROSSDEV_DECLARE_OP_CUDA_KERNELS_
