#pragma once
// Between the dispatcher's arguments and an OpCall, by the schema: Tensor and Tensor?
// arguments are the call's tensors (None = not given), float arguments its scalars, `bool
// training` and `Generator? generator` its training flag and generator (None = the default).
// The typed forward kernels use argument_slots (read once per op); the boxed backward and
// Autograd kernels, and OpSpec::run, which calls the ops through the dispatcher, use the rest.
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include "ops/op_definition.h"

namespace crossdev::ops::library {

// What one argument of an op's schema is in an OpCall.
enum class ArgumentRole : std::uint8_t { Tensor, Scalar, Training, Generator };
struct ArgumentSlot {
  ArgumentRole role;
  std::string name;  // the schema's argument name: OpCall::tensors / scalars key
  bool differentiable = false;  // a tensor that is a differentiable input (OpDefinition::inputs)
};
// The op's schema arguments in order, each with its role; a type the OpCall cannot hold is an
// error naming the argument.
std::vector<ArgumentSlot> argument_slots(const OpDefinition& definition);

// The schema's arguments from `first` on, as an OpCall; an `out` argument is skipped.
OpCall call_from_arguments(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> arguments,
                           std::size_t first = 0);

// Pushes `call` as the schema's arguments from `first` on (a float the call lacks takes the
// schema's default). A tensor or scalar of the call that the schema does not name is an error.
void push_arguments(const c10::FunctionSchema& schema, const OpCall& call, torch::jit::Stack& stack,
                    std::size_t first = 0);

// The result's shape: the broadcast of OpDefinition::output_shape_from's inputs (default: the
// first input's shape). Concrete sizes only (the Meta kernel has its own symbolic version).
std::vector<std::int64_t> output_shape(const OpDefinition& definition, const OpCall& call);

// The registered operator crossdev::<name>[.<overload>]; throws naming the op when absent.
c10::OperatorHandle operator_handle(std::string_view name, std::string_view overload = "");

// Calls crossdev::<op> through the dispatcher (autograd included) and returns its result.
at::Tensor call_op(const OpDefinition& definition, const OpCall& call);
// Calls one kernel of crossdev::<op> directly, bypassing dispatch (e.g. CompositeExplicitAutograd
// to force the fallback where a backend kernel would win). Autograd is ATen's, over whatever
// that kernel computes.
at::Tensor call_op_kernel(const OpDefinition& definition, const OpCall& call, c10::DispatchKey key);

}  // namespace crossdev::ops::library
