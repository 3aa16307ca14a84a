#pragma once
// The per-op table of fused CPU kernels, one entry per capability, in the manner of ATen's
// DispatchStub: each capability's copy of <op>/fused_cpu.cpp fills its entry during static
// initialization (CROSSDEV_REGISTER_CPU_KERNELS), and a call runs the entry of the highest
// capability not above cpu_capability() (capability.h).
//
//   kernels.h     CROSSDEV_DECLARE_OP_KERNELS(<op>) in namespace crossdev::ops::<op>: fallback,
//                 CpuKernels = cpu::CpuDispatch<CpuKernelsTag>, fused_cpu / fused_backward_cpu,
//                 and the CUDA kernels' declarations when they are built
//   fused_cpu.cpp namespace <op>::CPU_CAPABILITY { at::Tensor forward(...); ... }
//                 CROSSDEV_REGISTER_CPU_KERNELS(<op>, forward, backward)
//   op.cpp        def.fused_cpu = <op>::CpuKernels::forward;  (a plain KernelFn)
#include <c10/util/Exception.h>

#include "ops/cpu/capability.h"
#include "ops/op_definition.h"

namespace crossdev::ops::cpu {

template <typename Tag>
struct CpuDispatch {
  // Constant-initialized (all null) before any dynamic initializer fills them.
  static inline KernelFn forward_table[kCpuCapabilities] = {};
  static inline BackwardFn backward_table[kCpuCapabilities] = {};

  template <typename Fn>
  static Fn pick(Fn const (&table)[kCpuCapabilities]) {
    for (int c = static_cast<int>(cpu_capability()); c >= 0; --c) {
      if (table[c] != nullptr) return table[c];
    }
    return nullptr;
  }
  static at::Tensor forward(const OpCall& call) {
    const KernelFn fn = pick(forward_table);
    TORCH_CHECK(fn != nullptr, "crossdev: no fused CPU kernel registered for ", Tag::kName);
    return fn(call);
  }
  static std::vector<at::Tensor> backward(const OpCall& call, const at::Tensor& grad_out) {
    const BackwardFn fn = pick(backward_table);
    TORCH_CHECK(fn != nullptr, "crossdev: no fused CPU backward registered for ", Tag::kName);
    return fn(call, grad_out);
  }
  // The capability whose copy a call would run now.
  static CpuCapability running() {
    for (int c = static_cast<int>(cpu_capability()); c >= 0; --c) {
      if (forward_table[c] != nullptr) return static_cast<CpuCapability>(c);
    }
    return CpuCapability::Default;
  }

  struct Registrar {
    Registrar(CpuCapability capability, KernelFn forward, BackwardFn backward) {
      forward_table[static_cast<int>(capability)] = forward;
      backward_table[static_cast<int>(capability)] = backward;
    }
  };
};

}  // namespace crossdev::ops::cpu

// In a fused_cpu.cpp, at namespace scope outside any namespace. CROSSDEV_CPU_CAPABILITY_INDEX is
// set per copy by impl/ops/CMakeLists.txt.
#define CROSSDEV_REGISTER_CPU_KERNELS(op, forward_fn, backward_fn)                                   \
  namespace crossdev::ops::op::CPU_CAPABILITY {                                                     \
  namespace {                                                                                       \
  const ::crossdev::ops::op::CpuKernels::Registrar registered_cpu_kernels(                          \
      static_cast<::crossdev::ops::cpu::CpuCapability>(CROSSDEV_CPU_CAPABILITY_INDEX), forward_fn,  \
      backward_fn);                                                                                 \
  }                                                                                                 \
  }

#ifdef CROSSDEV_OPS_WITH_CUDA
#define CROSSDEV_DECLARE_OP_CUDA_KERNELS_                \
  at::Tensor fused_cuda(const ::crossdev::ops::OpCall& call); \
  std::vector<at::Tensor> fused_backward_cuda(const ::crossdev::ops::OpCall& call, const at::Tensor& grad_out);
#else
#define CROSSDEV_DECLARE_OP_CUDA_KERNELS_
#endif

// An op's kernels, declared once in its kernels.h inside namespace crossdev::ops::<op> (like ATen's
// DECLARE_DISPATCH): the fallback composition (fallback.cpp); the fused CPU kernels, one copy per
// instruction set (fused_cpu.cpp, CROSSDEV_REGISTER_CPU_KERNELS), chosen at run time; and the fused
// CUDA kernels (<op>.cu) when they are built.
#define CROSSDEV_DECLARE_OP_KERNELS(op)                                                            \
  at::Tensor fallback(const ::crossdev::ops::OpCall& call);                                         \
  struct CpuKernelsTag {                                                                           \
    static constexpr const char* kName = #op;                                                      \
  };                                                                                               \
  using CpuKernels = ::crossdev::ops::cpu::CpuDispatch<CpuKernelsTag>;                              \
  inline at::Tensor fused_cpu(const ::crossdev::ops::OpCall& call) { return CpuKernels::forward(call); } \
  inline std::vector<at::Tensor> fused_backward_cpu(const ::crossdev::ops::OpCall& call,             \
                                                    const at::Tensor& grad_out) {                  \
    return CpuKernels::backward(call, grad_out);                                                   \
  }                                                                                                \
  CROSSDEV_DECLARE_OP_CUDA_KERNELS_
