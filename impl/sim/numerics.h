#pragma once
// Numerics emulation: the small, realistic divergences real accelerators show against CPU results.
//
//  TF32 matmul  Before an op of the matmul family runs (table in numerics.cpp: mm, bmm, addmm,
//               baddbmm, addbmm, mv, addmv, dot, vdot, convolution_overrideable; matmul and
//               linear decompose into these), its float32 *operands* (never the added bias/self of
//               addmm, never the output) are rounded to TF32: 10 explicit mantissa bits, round to
//               nearest, ties to even (CUTLASS's default float -> tfloat32_t conversion). The
//               product is then accumulated in float32, as tensor cores do.
//  FTZ          After any computing op runs, subnormal values in its floating outputs become zero of
//               the same sign (-ftz=true / denormals-are-zero on outputs). Copies and views are
//               untouched, as copies on real devices do not flush.
#include <ATen/core/Tensor.h>
#include <ATen/core/stack.h>

#include <cstdint>

#include "sim/emulation_profile.h"

namespace crossdev::sim {

// Rounds one float32 value to TF32 (result is still a float32 with the low 13 bits zero).
float round_to_tf32(float x) noexcept;

// Replaces the float32 sim operands of a matmul-family op on the stack with TF32-rounded copies.
// Returns true when the op is in the family (whether or not any operand was float32).
bool round_matmul_operands(const c10::FunctionSchema& schema, torch::jit::Stack& stack);

// Flushes subnormals in the op's returned sim tensors (skipping returns that are views).
void flush_subnormal_outputs(const c10::FunctionSchema& schema, torch::jit::Stack& stack);

// In-place flush of one sim or CPU tensor.
void flush_subnormals_(const at::Tensor& t);

// Distance in units in the last place between two float32 values (0 when bit-identical).
std::int64_t ulp_distance(float a, float b) noexcept;

}  // namespace crossdev::sim
