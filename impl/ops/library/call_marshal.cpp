#include "ops/library/call_marshal.h"

#include <set>

#include <ATen/ExpandUtils.h>
#include <c10/util/Exception.h>

#include <torch/library.h>

#include "ops/library/op_schemas.h"

namespace crossdev::ops::library {
namespace {

bool is_tensor_argument(const c10::Argument& arg) {
  const c10::TypePtr& type = arg.type();
  if (type->kind() == c10::TypeKind::TensorType) return true;
  if (const auto optional = type->cast<c10::OptionalType>()) return optional->getElementType()->kind() == c10::TypeKind::TensorType;
  return false;
}

bool is_out_argument(const c10::Argument& arg) { return arg.alias_info() != nullptr && arg.alias_info()->isWrite(); }

bool is_generator_argument(const c10::Argument& arg) {
  const c10::TypePtr& type = arg.type();
  if (type->kind() == c10::TypeKind::GeneratorType) return true;
  if (const auto optional = type->cast<c10::OptionalType>()) return optional->getElementType()->kind() == c10::TypeKind::GeneratorType;
  return false;
}

ArgumentRole role_of(const c10::FunctionSchema& schema, const c10::Argument& arg) {
  if (is_tensor_argument(arg)) return ArgumentRole::Tensor;
  if (is_generator_argument(arg)) return ArgumentRole::Generator;
  const c10::TypeKind kind = arg.type()->kind();
  if (arg.name() == "training" && kind == c10::TypeKind::BoolType) return ArgumentRole::Training;
  if (kind == c10::TypeKind::FloatType || kind == c10::TypeKind::IntType) return ArgumentRole::Scalar;
  TORCH_CHECK(false, schema.name(), ": argument '", arg.name(), "' of type ", arg.type()->str(),
              " is not a tensor, float, int, `bool training` or `Generator? generator`");
  return ArgumentRole::Scalar;  // unreachable
}

}  // namespace

std::vector<ArgumentSlot> argument_slots(const OpDefinition& definition) {
  const c10::FunctionSchema schema = torch::schema(definition.schema);
  std::vector<ArgumentSlot> slots;
  for (const c10::Argument& arg : schema.arguments()) {
    const ArgumentRole role = role_of(schema, arg);
    bool differentiable = false;
    for (const InputSpec& in : definition.inputs) {
      differentiable = differentiable || (role == ArgumentRole::Tensor && in.differentiable && arg.name() == in.name);
    }
    slots.push_back({role, arg.name(), differentiable});
  }
  return slots;
}

OpCall call_from_arguments(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> arguments, std::size_t first) {
  OpCall call;
  const auto& args = schema.arguments();
  for (std::size_t i = first; i < args.size(); ++i) {
    const c10::Argument& arg = args[i];
    const c10::IValue& value = arguments[i - first];
    if (is_out_argument(arg)) continue;
    if (is_tensor_argument(arg)) {
      if (value.isTensor()) call.tensors[arg.name()] = value.toTensor();
    } else if (arg.name() == "training") {
      call.training = value.toBool();
    } else if (is_generator_argument(arg)) {
      if (value.isGenerator()) call.generator = value.toGenerator();
    } else if (value.isDouble()) {
      call.scalars[arg.name()] = value.toDouble();
    } else if (value.isInt()) {
      call.scalars[arg.name()] = static_cast<double>(value.toInt());
    } else {
      TORCH_CHECK(false, schema.name(), ": argument '", arg.name(), "' of type ", arg.type()->str(),
                   " is not a tensor, float, `bool training` or `Generator? generator`");
    }
  }
  return call;
}

void push_arguments(const c10::FunctionSchema& schema, const OpCall& call, torch::jit::Stack& stack, std::size_t first) {
  const auto& args = schema.arguments();
  std::set<std::string> tensors_used, scalars_used;
  for (std::size_t i = first; i < args.size(); ++i) {
    const c10::Argument& arg = args[i];
    if (is_out_argument(arg)) continue;
    if (is_tensor_argument(arg)) {
      tensors_used.insert(arg.name());
      const at::Tensor t = call.tensor(arg.name());
      TORCH_CHECK(t.defined() || arg.type()->kind() == c10::TypeKind::OptionalType, schema.name(), ": argument '",
                  arg.name(), "' (Tensor) is required but missing");
      stack.emplace_back(t.defined() ? c10::IValue(t) : c10::IValue());
    } else if (arg.name() == "training") {
      stack.emplace_back(call.training);
    } else if (is_generator_argument(arg)) {
      stack.emplace_back(call.generator.has_value() ? c10::IValue(*call.generator) : c10::IValue());
    } else if (arg.type()->kind() == c10::TypeKind::IntType) {
      scalars_used.insert(arg.name());
      stack.emplace_back(static_cast<std::int64_t>(call.scalar(arg.name(), arg.default_value() ? arg.default_value()->toInt() : 0)));
    } else {
      scalars_used.insert(arg.name());
      const auto given = call.maybe_scalar(arg.name());
      TORCH_CHECK(given || arg.default_value(), schema.name(), ": argument '", arg.name(), "' (float) is required but missing");
      stack.emplace_back(given ? *given : arg.default_value()->toDouble());
    }
  }
  for (const auto& [name, t] : call.tensors) {
    TORCH_CHECK(!t.defined() || tensors_used.count(name), schema.name(), ": unknown input '", name, "'; the schema is ", c10::toString(schema));
  }
  for (const auto& [name, value] : call.scalars) {
    TORCH_CHECK(scalars_used.count(name), schema.name(), ": unknown scalar '", name, "'; the schema is ", c10::toString(schema));
  }
}

c10::OperatorHandle operator_handle(std::string_view name, std::string_view overload) {
  const std::string full = std::string(kNamespace) + "::" + std::string(name);
  const auto handle = c10::Dispatcher::singleton().findSchema({full, std::string(overload)});
  TORCH_CHECK(handle.has_value(), "operator ", full, overload.empty() ? "" : ".", overload,
              " is not registered with the dispatcher");
  return *handle;
}

namespace {

at::Tensor single_result(const OpDefinition& definition, torch::jit::Stack& stack) {
  TORCH_CHECK(stack.size() == 1 && stack[0].isTensor(), "crossdev::", definition.name, " returned ", stack.size(),
              " values; expected one Tensor");
  return stack[0].toTensor();
}

}  // namespace

at::Tensor call_op(const OpDefinition& definition, const OpCall& call) {
  const c10::OperatorHandle op = operator_handle(definition.name);
  torch::jit::Stack stack;
  push_arguments(op.schema(), call, stack);
  op.callBoxed(stack);
  return single_result(definition, stack);
}

at::Tensor call_op_kernel(const OpDefinition& definition, const OpCall& call, c10::DispatchKey key) {
  const c10::OperatorHandle op = operator_handle(definition.name);
  TORCH_CHECK(op.hasKernelForDispatchKey(key), "crossdev::", definition.name, " has no kernel for ", key);
  torch::jit::Stack stack;
  push_arguments(op.schema(), call, stack);
  op.callBoxedForDispatchKey(key, stack);
  return single_result(definition, stack);
}

std::vector<std::int64_t> output_shape(const OpDefinition& definition, const OpCall& call) {
  const std::vector<const char*>& from = definition.output_shape_from;
  const at::Tensor first = call.tensor(from.empty() ? definition.inputs.front().name : from.front());
  std::vector<std::int64_t> shape = first.sizes().vec();
  for (std::size_t i = 1; i < from.size(); ++i) {
    const at::Tensor t = call.tensor(from[i]);
    if (t.defined()) shape = at::infer_size(shape, t.sizes());
  }
  return shape;
}

}  // namespace crossdev::ops::library
