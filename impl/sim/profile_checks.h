#pragma once
// Where the active profile's constraints are enforced. Each check raises the emulated device's
// verbatim error with the same C++ exception type (and so the same Python exception) it uses.
#include <ATen/core/Tensor.h>
#include <ATen/core/function_schema.h>
#include <ATen/core/operator_name.h>
#include <ATen/core/stack.h>
#include <c10/core/ScalarType.h>

#include "sim/sim_config.h"

namespace crossdev::sim {

// Allocation of `dtype` on the device (empty, empty_strided, and so every .to(dtype/device)).
// c10::TypeError with the profile's text, as MPS raises in empty_mps.
void check_dtype_supported(const EmulationProfile& p, c10::ScalarType dtype);

// Any kernel entry on a tpu-like device under c10::InferenceMode: c10::Error with
// "Cannot set version_counter for inference tensor" (seed 001; torch.no_grad is the recipe).
void check_inference_mode(const EmulationProfile& p);

// All tensor arguments of a computing op must be on one device. CPU zero-dim tensors are allowed,
// as TensorIterator allows CPU scalars; ops that take CPU index tensors are exempt (see .cpp).
void check_same_device(const EmulationProfile& p, const c10::FunctionSchema& schema, const torch::jit::Stack& stack);

// Listed ops raise NotImplementedError unless the MPS CPU switch is on. Returns true when the op
// is listed and the switch delegates it to the CPU (the caller records that).
bool check_op_supported(const EmulationProfile& p, const SimConfig& config, const c10::OperatorName& op);

}  // namespace crossdev::sim
