#pragma once
// Sim storage is host memory, so a sim tensor can be viewed as a CPU tensor without a copy. Kernels
// use this to run CPU code on sim data in place (OpenReg's _copy_from does the same).
#include <ATen/core/Tensor.h>

namespace crossdev::sim {

// A CPU tensor aliasing `t`'s elements (same sizes, strides, dtype). `t` must outlive it.
at::Tensor host_alias(const at::Tensor& t);

}  // namespace crossdev::sim
