#pragma once
// The per-op table of fused CPU kernels, one entry per capability, in the manner of ATen's
// DispatchStub: each capability's copy of <op>/fused_cpu.cpp fills its entry during static
// initialization (CROSSDEV_REGISTER_CPU_KERNELS), and a call runs the entry of the highest
// capability not above cpu_capability() (capability.h).
//
//   kernels.h     struct CpuKernelsTag;  using CpuKernels = cpu::CpuDispatch<CpuKernelsTag>;
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
