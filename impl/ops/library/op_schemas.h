#pragma once
// The three schemas of an op, all derived from the one line in its op.cpp:
//   crossdev::modulate(Tensor x, Tensor shift, Tensor scale) -> Tensor
//   crossdev::modulate.out(Tensor x, Tensor shift, Tensor scale, *, Tensor(a!) out) -> ()
//   crossdev::modulate_backward(Tensor grad_out, Tensor x, Tensor shift, Tensor scale) -> (Tensor, Tensor, Tensor)
// The .out overload returns nothing: a custom op that mutates an argument must not also return it
// (ATen's `-> Tensor(a!)` convention does not carry over; AOTAutograd refuses a custom op whose
// output has an alias annotation), so the result is the `out` the caller passed.
// The backward returns one gradient per differentiable input (OpDefinition::inputs order); an
// input that was not given gets an empty tensor in its slot.
#include <ATen/core/operator_name.h>

#include <string>
#include <string_view>

#include "ops/op_definition.h"

namespace crossdev::ops::library {

inline constexpr std::string_view kNamespace = "crossdev";
inline constexpr std::string_view kBackwardSuffix = "_backward";

std::string out_schema(const OpDefinition& definition);
std::string backward_schema(const OpDefinition& definition);
std::string backward_name(const OpDefinition& definition);  // "<op>_backward"
std::size_t differentiable_count(const OpDefinition& definition);
// True for an op with a training mode (`bool training`: a random dropout mask). A call in that mode
// has no double backward, and its gradient cannot be traced by AOTAutograd (autograd_kernels.cpp
// raises naming the op in both cases), so neither <op> nor <op>_backward passes opcheck's
// test_aot_dispatch_dynamic there, and neither is tagged pt2_compliant (library.cpp).
bool has_training_mode(const OpDefinition& definition);

}  // namespace crossdev::ops::library
