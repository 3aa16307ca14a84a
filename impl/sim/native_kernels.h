#pragma once
// The ops the sim device implements natively (memory, copies, views); everything else goes
// through sim_delegate_to_cpu. Modelled on OpenReg's Minimal.cpp in pytorch/pytorch
// (test/cpp_extensions/open_registration_extension/torch_openreg/csrc/aten/native/Minimal.cpp).
#include <torch/library.h>

namespace crossdev::sim {

// Registers the native kernels on `aten` for the PrivateUse1 key.
void register_native_kernels(torch::Library& aten_privateuse1);

}  // namespace crossdev::sim
