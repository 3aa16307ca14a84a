// The Autograd kernels. crossdev::<op>: when grad mode is on and a differentiable input requires
// grad, a torch::autograd::Function runs the op below autograd and, in backward, calls
// crossdev::<op>_backward through the dispatcher, so the backward is the backend's own kernel
// (fused where there is one) and traceable like any other op (AOTAutograd, torch.compile).
// crossdev::<op>.out: refuses inputs that require grad, as ATen's out= overloads do.
// A `Generator?` argument is saved as a copy of the generator's state before the forward draws
// from it (the device's default generator when None), and the backward gets a fresh copy of that
// state each time it runs, so it redraws the forward's random stream (generator_stream.h).
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/GradMode.h>
#include <torch/csrc/autograd/custom_function.h>

#include "ops/generator_stream.h"
#include "ops/library/call_marshal.h"
#include "ops/library/op_schemas.h"
#include "ops/library/register_op.h"

namespace crossdev::ops::library {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

bool is_differentiable_input(const OpDefinition& def, const std::string& name) {
  for (const InputSpec& in : def.inputs) {
    if (name == in.name) return in.differentiable;
  }
  return false;
}

bool is_generator_argument(const c10::Argument& arg) {
  c10::TypePtr type = arg.type();
  if (const auto optional = type->cast<c10::OptionalType>()) type = optional->getElementType();
  return type->kind() == c10::TypeKind::GeneratorType;
}

// The device of the call: its first tensor argument's.
c10::Device call_device(const std::vector<c10::IValue>& arguments) {
  for (const c10::IValue& arg : arguments) {
    if (arg.isTensor()) return arg.toTensor().device();
  }
  return c10::Device(c10::kCPU);
}

// Non-tensor arguments of apply() before the tensor list; they get no gradient slot filled.
constexpr std::size_t kLeadingArgs = 3;

class OpFunction : public torch::autograd::Function<OpFunction> {
 public:
  // `arguments`: the op's full argument list; `differentiable`: the defined differentiable
  // tensors among them, in schema order (the edges autograd builds).
  static at::Tensor forward(AutogradContext* ctx, const OpDefinition* def, const c10::OperatorHandle* op,
                            const std::vector<c10::IValue>* arguments, at::TensorList differentiable) {
    (void)differentiable;
    std::vector<at::Tensor> saved;
    c10::impl::GenericList rest(c10::AnyType::get());
    const auto& schema_args = op->schema().arguments();
    for (std::size_t i = 0; i < arguments->size(); ++i) {
      const c10::IValue& arg = (*arguments)[i];
      saved.push_back(arg.isTensor() ? arg.toTensor() : at::Tensor());
      if (is_generator_argument(schema_args[i])) {
        const std::optional<at::Generator> given = arg.isGenerator() ? std::optional(arg.toGenerator()) : std::nullopt;
        rest.push_back(generator_stream::snapshot(given, call_device(*arguments)));
      } else {
        rest.push_back(arg.isTensor() ? c10::IValue() : arg);
      }
    }
    ctx->save_for_backward(saved);
    ctx->saved_data["arguments"] = rest;
    ctx->saved_data["op"] = std::string(def->name);

    at::AutoDispatchBelowADInplaceOrView below_autograd;
    torch::jit::Stack stack(arguments->begin(), arguments->end());
    op->callBoxed(stack);
    return stack.at(0).toTensor();
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const OpDefinition& def = *find_definition(ctx->saved_data["op"].toStringRef());
    const c10::OperatorHandle forward_op = operator_handle(def.name);
    const c10::OperatorHandle backward_op = operator_handle(backward_name(def));
    const variable_list saved = ctx->get_saved_variables();
    const c10::List<c10::IValue> rest = ctx->saved_data["arguments"].toList();

    const auto& args = forward_op.schema().arguments();
    std::vector<std::size_t> slots;  // for each differentiable input in schema order: its gradient's index
    torch::jit::Stack stack;
    stack.emplace_back(grad_outputs.at(0).defined() ? grad_outputs[0] : at::Tensor());
    std::size_t grad_index = 0;
    std::vector<std::pair<std::string, std::size_t>> grad_of_input;  // input name -> backward output index
    for (const InputSpec& in : def.inputs) {
      if (in.differentiable) grad_of_input.emplace_back(in.name, grad_index++);
    }
    variable_list out(kLeadingArgs);
    for (std::size_t i = 0; i < args.size(); ++i) {
      const bool tensor = saved[i].defined();
      if (tensor) {
        stack.emplace_back(saved[i]);
      } else if (rest.get(i).isGenerator()) {
        stack.emplace_back(rest.get(i).toGenerator().clone());  // each backward redraws the same stream
      } else {
        stack.emplace_back(rest.get(i));
      }
      if (tensor && is_differentiable_input(def, args[i].name())) {
        for (const auto& [name, index] : grad_of_input) {
          if (name == args[i].name()) slots.push_back(index);
        }
      }
    }
    if (!grad_outputs[0].defined()) {
      out.resize(kLeadingArgs + slots.size());
      return out;
    }
    backward_op.callBoxed(stack);
    for (std::size_t k = 0; k < slots.size(); ++k) {
      out.push_back(ctx->needs_input_grad(k) ? stack.at(slots[k]).toTensor() : at::Tensor());
    }
    return out;
  }
};

void autograd_forward(const c10::OperatorHandle& op, c10::DispatchKeySet keys, torch::jit::Stack* stack) {
  const c10::FunctionSchema& schema = op.schema();
  const OpDefinition& def = definition_of(schema.operator_name());
  const std::size_t n = schema.arguments().size();
  std::vector<c10::IValue> arguments(stack->end() - static_cast<std::ptrdiff_t>(n), stack->end());
  std::vector<at::Tensor> differentiable;
  bool requires_grad = false;
  for (std::size_t i = 0; i < n; ++i) {
    if (!arguments[i].isTensor() || !is_differentiable_input(def, schema.arguments()[i].name())) continue;
    differentiable.push_back(arguments[i].toTensor());
    requires_grad = requires_grad || differentiable.back().requires_grad();
  }
  if (!requires_grad || !c10::GradMode::is_enabled()) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    op.redispatchBoxed(keys & c10::after_ADInplaceOrView_keyset, stack);
    return;
  }
  torch::jit::drop(*stack, n);
  stack->emplace_back(OpFunction::apply(&def, &op, &arguments, at::TensorList(differentiable)));
}

void autograd_out(const c10::OperatorHandle& op, c10::DispatchKeySet keys, torch::jit::Stack* stack) {
  const c10::FunctionSchema& schema = op.schema();
  const std::size_t n = schema.arguments().size();
  const auto arguments = torch::jit::last(*stack, n);
  if (c10::GradMode::is_enabled()) {
    for (std::size_t i = 0; i < n; ++i) {
      TORCH_CHECK(!(arguments[i].isTensor() && arguments[i].toTensor().requires_grad()), schema.name(), ".out",
                  ": functions with out=... arguments don't support automatic differentiation, but argument '",
                  schema.arguments()[i].name(), "' requires grad");
    }
  }
  at::AutoDispatchBelowADInplaceOrView below_autograd;
  op.redispatchBoxed(keys & c10::after_ADInplaceOrView_keyset, stack);
}

}  // namespace

void register_autograd_kernels(torch::Library& m, const OpDefinition& definition) {
  m.impl(definition.name, torch::CppFunction::makeFromBoxedFunction<&autograd_forward>());
  m.impl((std::string(definition.name) + ".out").c_str(), torch::CppFunction::makeFromBoxedFunction<&autograd_out>());
}

}  // namespace crossdev::ops::library
