#pragma once
// The three schemas of an op, all derived from the one line in its op.cpp:
//   crossdev::modulate(Tensor x, Tensor shift, Tensor scale) -> Tensor
//   crossdev::modulate.out(Tensor x, Tensor shift, Tensor scale, *, Tensor(a!) out) -> Tensor(a!)
//   crossdev::modulate_backward(Tensor grad_out, Tensor x, Tensor shift, Tensor scale) -> (Tensor, Tensor, Tensor)
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

// "crossdev::modulate" -> the definition; "crossdev::modulate_backward" -> the same definition.
const OpDefinition& definition_of(const c10::OperatorName& name);

}  // namespace crossdev::ops::library
