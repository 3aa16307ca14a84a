// The Autograd kernels. crossdev::<op>: when grad mode is on and a differentiable input requires
// grad, a torch::autograd::Function runs the op below autograd and, in backward, calls
// crossdev::<op>_backward through the dispatcher, so the backward is the backend's own kernel
// (fused where there is one) and traceable like any other op (AOTAutograd, torch.compile).
// crossdev::<op>_backward: differentiable too (double backward, gradgradcheck). Its forward is
// the backend's backward kernel, run below autograd as above; its own backward differentiates the
// fallback composition twice (ATen's autograd over the reference), on the saved arguments, so the
// first-order gradient stays the fused one and the second-order one is the reference's. A call in
// training mode (a random dropout mask) has no double backward: it raises naming the op.
// crossdev::<op>.out: refuses inputs that require grad, as ATen's out= overloads do.
// An input the op table does not declare differentiable (InputSpec::differentiable) that requires
// grad makes crossdev::<op> and crossdev::<op>_backward raise NotImplementedError naming it, as
// ATen's not-implemented derivatives do ("the derivative for 'cos' is not implemented"), never a
// silent None gradient.
// A `Generator?` argument is saved as a copy of the generator's state before the forward draws
// from it (the device's default generator when None), and the backward gets a fresh copy of that
// state each time it runs, so it redraws the forward's random stream (generator_stream.h).
#include <map>
#include <memory>
#include <vector>

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/GradMode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include "ops/generator_stream.h"
#include "ops/library/call_marshal.h"
#include "ops/library/op_schemas.h"
#include "ops/library/register_op.h"
#include "ops/library/typed_kernels.h"

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

// Whether the call draws random numbers: not when its `bool training` argument is false (eval mode).
bool call_draws(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& arguments) {
  const auto& args = schema.arguments();
  for (std::size_t i = 0; i < args.size() && i < arguments.size(); ++i) {
    if (args[i].name() == "training" && arguments[i].isBool()) return arguments[i].toBool();
  }
  return true;
}

// The device of the call: its first tensor argument's.
c10::Device call_device(const std::vector<c10::IValue>& arguments) {
  for (const c10::IValue& arg : arguments) {
    if (arg.isTensor()) return arg.toTensor().device();
  }
  return c10::Device(c10::kCPU);
}

// What an op's graph nodes call, resolved once when its Autograd kernels are registered
// (register_autograd_kernels), so no backward looks anything up by name. Lives as long as the library.
struct AutogradOps {
  const OpDefinition* definition;
  c10::OperatorHandle forward;   // crossdev::<op>
  c10::OperatorHandle backward;  // crossdev::<op>_backward
};

// One entry per op, appended during static registration (one thread), only read afterwards.
std::vector<std::unique_ptr<const AutogradOps>>& registered_autograd_ops() {
  static std::vector<std::unique_ptr<const AutogradOps>> ops;
  return ops;
}

const AutogradOps& add_autograd_ops(const OpDefinition& definition) {
  registered_autograd_ops().push_back(std::make_unique<const AutogradOps>(
      AutogradOps{&definition, operator_handle(definition.name), operator_handle(backward_name(definition))}));
  return *registered_autograd_ops().back();
}

// The recording path's: the op table's row is the key (a pointer compared over a few entries, no name).
const AutogradOps& autograd_ops_of(const OpDefinition& definition) {
  const AutogradOps* found = nullptr;
  for (const auto& entry : registered_autograd_ops()) {
    if (entry->definition == &definition) found = entry.get();
  }
  TORCH_CHECK(found != nullptr, "crossdev::", definition.name, ": its Autograd kernels are not registered");
  return *found;
}

// Raises NotImplementedError naming `name` when it requires grad: `op` ("<op>" or "<op>_backward")
// cannot differentiate it. Called, with grad mode on, for each tensor argument that is not differentiable.
void refuse_gradient_of(const char* op, std::string_view suffix, const std::string& name, const c10::IValue& argument) {
  TORCH_CHECK_NOT_IMPLEMENTED(!(argument.isTensor() && argument.toTensor().defined() && argument.toTensor().requires_grad()),
                              "crossdev::", op, suffix, ": the derivative for '", name,
                              "' is not implemented (the op table declares it not differentiable)");
}

// Non-tensor arguments of apply() before the tensor list; they get no gradient slot filled.
constexpr std::size_t kLeadingArgs = 2;

// A graph node keeps its op's AutogradOps (which live as long as the library) as an integer in
// its saved data, so its backward resolves nothing by name.
c10::IValue saved_ops(const AutogradOps& ops) { return static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(&ops)); }
const AutogradOps& ops_of(AutogradContext* ctx) {
  return *reinterpret_cast<const AutogradOps*>(static_cast<std::intptr_t>(ctx->saved_data["ops"].toInt()));
}

class OpFunction : public torch::autograd::Function<OpFunction> {
 public:
  // `arguments`: the op's full argument list; `differentiable`: the defined differentiable
  // tensors among them, in schema order (the edges autograd builds).
  static at::Tensor forward(AutogradContext* ctx, const AutogradOps* ops, const std::vector<c10::IValue>* arguments,
                            at::TensorList differentiable) {
    (void)differentiable;
    const c10::OperatorHandle* op = &ops->forward;
    std::vector<at::Tensor> saved;
    c10::impl::GenericList rest(c10::AnyType::get());
    const auto& schema_args = op->schema().arguments();
    // A call in eval mode draws nothing, so its backward gets no generator: nothing to replay, and no
    // Generator in the backward AOTAutograd traces (torch before 2.12 cannot trace one as an argument).
    const bool draws = call_draws(op->schema(), *arguments);
    for (std::size_t i = 0; i < arguments->size(); ++i) {
      const c10::IValue& arg = (*arguments)[i];
      saved.push_back(arg.isTensor() ? arg.toTensor() : at::Tensor());
      if (is_generator_argument(schema_args[i]) && !draws) {
        rest.push_back(c10::IValue());
      } else if (is_generator_argument(schema_args[i])) {
        const std::optional<at::Generator> given = arg.isGenerator() ? std::optional(arg.toGenerator()) : std::nullopt;
        rest.push_back(generator_stream::snapshot(given, call_device(*arguments)));
      } else {
        rest.push_back(arg.isTensor() ? c10::IValue() : arg);
      }
    }
    ctx->save_for_backward(saved);
    ctx->saved_data["arguments"] = rest;
    ctx->saved_data["ops"] = saved_ops(*ops);

    at::AutoDispatchBelowADInplaceOrView below_autograd;
    torch::jit::Stack stack(arguments->begin(), arguments->end());
    op->callBoxed(stack);
    return stack.at(0).toTensor();
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const AutogradOps& node_ops = ops_of(ctx);
    const OpDefinition& def = *node_ops.definition;
    const c10::OperatorHandle& forward_op = node_ops.forward;
    const c10::OperatorHandle& backward_op = node_ops.backward;
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

// Second-order gradients of the fallback composition at `call`: the gradient of
// sum_k <first_k, grad_of_first[k]>, where first_k is the derived gradient of the input named k,
// with respect to grad_out ("grad_out") and to every differentiable input (by name). An argument
// that requires grad is reached through an alias of itself, so with `create_graph` the result
// stays connected to the caller's graph (third order), and an argument passed twice gets its
// partial gradients; any other argument gets a fresh leaf.
std::map<std::string, at::Tensor> fallback_double_backward(const OpDefinition& def, const OpCall& call,
                                                           const at::Tensor& grad_out,
                                                           const std::map<std::string, at::Tensor>& grad_of_first,
                                                           bool create_graph) {
  // Called from the autograd engine, or below the Autograd key (a kernel calling autograd): the
  // fallback's graph must be recorded, so the autograd keys are included for this scope.
  c10::impl::LocalDispatchKeySet tls = c10::impl::tls_local_dispatch_key_set();
  tls.excluded_ = tls.excluded_ - c10::autograd_dispatch_keyset_with_ADInplaceOrView;
  c10::impl::ForceDispatchKeyGuard autograd_on(tls);
  at::AutoGradMode enable_grad(true);
  const auto stand_in = [](const at::Tensor& t) { return t.requires_grad() ? t.view_as(t) : t.detach().requires_grad_(true); };

  const at::Tensor g = stand_in(grad_out);
  OpCall leaf_call = call;
  std::vector<std::string> names;
  std::vector<at::Tensor> leaves;
  for (const InputSpec& in : def.inputs) {
    if (!in.differentiable || !call.tensor(in.name).defined()) continue;
    leaf_call.tensors[in.name] = stand_in(call.tensor(in.name));
    names.emplace_back(in.name);
    leaves.push_back(leaf_call.tensors[in.name]);
  }
  std::map<std::string, at::Tensor> result;
  if (leaves.empty()) return result;
  const at::Tensor out = def.fallback(leaf_call);
  const torch::autograd::variable_list first =
      torch::autograd::grad({out}, leaves, {g}, /*retain_graph=*/true, /*create_graph=*/true, /*allow_unused=*/true);
  std::vector<at::Tensor> outputs, seeds;
  for (std::size_t k = 0; k < names.size(); ++k) {
    const auto seed = grad_of_first.find(names[k]);
    if (seed == grad_of_first.end() || !seed->second.defined() || !first[k].defined() || !first[k].requires_grad()) continue;
    outputs.push_back(first[k]);
    seeds.push_back(seed->second);
  }
  if (outputs.empty()) return result;  // the first-order gradients do not depend on the arguments
  std::vector<at::Tensor> wrt{g};
  wrt.insert(wrt.end(), leaves.begin(), leaves.end());
  const torch::autograd::variable_list second =
      torch::autograd::grad(outputs, wrt, seeds, /*retain_graph=*/create_graph, create_graph, /*allow_unused=*/true);
  result["grad_out"] = second[0];
  for (std::size_t k = 0; k < names.size(); ++k) result[names[k]] = second[k + 1];
  return result;
}

// crossdev::<op>_backward as a differentiable function. Edges: grad_out, then the defined
// differentiable inputs in schema order (their names are saved as "edges").
class BackwardOpFunction : public torch::autograd::Function<BackwardOpFunction> {
 public:
  static variable_list forward(AutogradContext* ctx, const AutogradOps* ops, const std::vector<c10::IValue>* arguments,
                               const c10::List<std::string>* edges, at::TensorList differentiable) {
    (void)differentiable;
    std::vector<at::Tensor> saved;
    c10::impl::GenericList rest(c10::AnyType::get());
    for (const c10::IValue& arg : *arguments) {
      saved.push_back(arg.isTensor() ? arg.toTensor() : at::Tensor());
      rest.push_back(arg.isTensor() ? c10::IValue() : arg);
    }
    ctx->save_for_backward(saved);
    ctx->saved_data["arguments"] = rest;
    ctx->saved_data["ops"] = saved_ops(*ops);
    ctx->saved_data["edges"] = *edges;

    at::AutoDispatchBelowADInplaceOrView below_autograd;
    torch::jit::Stack stack(arguments->begin(), arguments->end());
    ops->backward.callBoxed(stack);
    variable_list grads;
    for (const c10::IValue& v : stack) grads.push_back(v.toTensor());
    return grads;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_of_grads) {
    const AutogradOps& node_ops = ops_of(ctx);
    const OpDefinition& def = *node_ops.definition;
    const c10::OperatorHandle& backward_op = node_ops.backward;
    const variable_list saved = ctx->get_saved_variables();
    const c10::List<c10::IValue> rest = ctx->saved_data["arguments"].toList();
    const c10::List<std::string> edges = ctx->saved_data["edges"].to<c10::List<std::string>>();

    std::vector<c10::IValue> arguments;
    for (std::size_t i = 0; i < saved.size(); ++i) arguments.emplace_back(saved[i].defined() ? c10::IValue(saved[i]) : rest.get(i));
    const OpCall call = call_from_arguments(backward_op.schema(), c10::ArrayRef<c10::IValue>(arguments).slice(1), /*first=*/1);

    // grad_of_grads: one per output of <op>_backward, i.e. per differentiable input in
    // OpDefinition::inputs order.
    std::map<std::string, at::Tensor> grad_of_first;
    std::size_t output = 0;
    for (const InputSpec& in : def.inputs) {
      if (!in.differentiable) continue;
      if (output < grad_of_grads.size() && grad_of_grads[output].defined()) grad_of_first[in.name] = grad_of_grads[output];
      ++output;
    }
    variable_list out(kLeadingArgs + 1);  // no gradient for the non-tensor arguments (ops, arguments, edges)
    if (grad_of_first.empty()) {
      out.resize(out.size() + edges.size());
      return out;
    }
    TORCH_CHECK(!call.training, "crossdev::", def.name, "_backward: double backward (the gradient of a gradient) is not "
                "supported in training mode: the dropout mask is random, and the second derivative would need the "
                "first's mask. Differentiate ", def.name, " once, or call it with training=False");
    const std::map<std::string, at::Tensor> second =
        fallback_double_backward(def, call, saved[0], grad_of_first, c10::GradMode::is_enabled());
    for (std::size_t k = 0; k < edges.size(); ++k) {
      const auto found = second.find(edges.get(k));
      out.push_back(ctx->needs_input_grad(k) && found != second.end() ? found->second : at::Tensor());
    }
    return out;
  }
};

// A random call (a `Generator?` argument and `training` true) saves its generator's state for the
// backward, which redraws the forward's mask from it. Traced by AOTAutograd (torch.compile,
// torch.export with gradients), that saved state becomes a constant of the backward graph: every
// compiled step's backward would replay the mask drawn at trace time, not the one its forward drew,
// and the gradients would be silently wrong. Until the stream travels as tensors (as ATen's flash
// attention passes its philox seed and offset), such a trace is refused, naming the op.
void refuse_traced_random_backward(const OpDefinition& def, const c10::FunctionSchema& schema,
                                   const std::vector<c10::IValue>& arguments) {
  bool generator = false, training = false;
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const c10::Argument& arg = schema.arguments()[i];
    generator = generator || is_generator_argument(arg);
    if (arg.name() == "training" && arguments[i].isBool()) training = arguments[i].toBool();
  }
  if (!generator || !training) return;
  using c10::impl::TorchDispatchModeKey;
  using c10::impl::TorchDispatchModeTLS;
  const bool traced = TorchDispatchModeTLS::get_mode(TorchDispatchModeKey::FUNCTIONAL).has_value() ||
                      TorchDispatchModeTLS::get_mode(TorchDispatchModeKey::PROXY).has_value();
  TORCH_CHECK_NOT_IMPLEMENTED(!traced, "crossdev::", def.name,
                              ": training=True with inputs that require grad cannot be traced for autograd "
                              "(torch.compile / AOTAutograd / torch.export): the backward would replay the dropout mask "
                              "drawn at trace time on every step. Run this call eagerly (e.g. torch.compiler.disable "
                              "around it), or trace it with training=False or without gradients.");
}

// crossdev::<op>_backward: grad_out and the differentiable inputs are its differentiable arguments.
void autograd_backward(const AutogradOps& ops, c10::DispatchKeySet keys, torch::jit::Stack* stack) {
  const OpDefinition& def = *ops.definition;
  const c10::OperatorHandle& op = ops.backward;
  const c10::FunctionSchema& schema = op.schema();
  const std::size_t n = schema.arguments().size();
  std::vector<c10::IValue> arguments(stack->end() - static_cast<std::ptrdiff_t>(n), stack->end());
  std::vector<at::Tensor> differentiable;
  c10::List<std::string> edges;
  bool requires_grad = false;
  const bool grad_mode = c10::GradMode::is_enabled();
  for (std::size_t i = 0; i < n; ++i) {
    const std::string& name = schema.arguments()[i].name();
    if (!arguments[i].isTensor()) continue;
    if (!(i == 0 || is_differentiable_input(def, name))) {
      if (grad_mode) refuse_gradient_of(def.name, kBackwardSuffix, name, arguments[i]);
      continue;
    }
    differentiable.push_back(arguments[i].toTensor());
    edges.push_back(name);
    requires_grad = requires_grad || differentiable.back().requires_grad();
  }
  if (!requires_grad || !grad_mode) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    op.redispatchBoxed(keys & c10::after_ADInplaceOrView_keyset, stack);
    return;
  }
  torch::jit::drop(*stack, n);
  for (at::Tensor& grad : BackwardOpFunction::apply(&ops, &arguments, &edges, at::TensorList(differentiable))) {
    stack->emplace_back(std::move(grad));
  }
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

// The boxed Autograd kernel of crossdev::<op>_backward, holding the op's definition and handles.
class AutogradBackwardKernel final : public c10::OperatorKernel {
 public:
  explicit AutogradBackwardKernel(const AutogradOps& ops) : ops_(ops) {}
  void operator()(const c10::OperatorHandle& /*crossdev::<op>_backward*/, c10::DispatchKeySet keys, torch::jit::Stack* stack) {
    autograd_backward(ops_, keys, stack);
  }

 private:
  const AutogradOps& ops_;  // lives as long as the library
};

}  // namespace

at::Tensor autograd_record_forward(const OpDefinition& def, const c10::OperatorHandle& op,
                                   std::vector<c10::IValue> arguments) {
  const AutogradOps& ops = autograd_ops_of(def);
  const c10::FunctionSchema& schema = op.schema();
  std::vector<at::Tensor> differentiable;
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    if (!arguments[i].isTensor()) continue;
    const std::string& name = schema.arguments()[i].name();
    if (is_differentiable_input(def, name)) {
      differentiable.push_back(arguments[i].toTensor());
    } else {
      refuse_gradient_of(def.name, "", name, arguments[i]);  // the recording path runs in grad mode
    }
  }
  refuse_traced_random_backward(def, schema, arguments);
  return OpFunction::apply(&ops, &arguments, at::TensorList(differentiable));
}

void register_autograd_kernels(torch::Library& m, const OpDefinition& definition) {
  m.impl((std::string(definition.name) + ".out").c_str(), torch::CppFunction::makeFromBoxedFunction<&autograd_out>());
  m.impl(backward_name(definition).c_str(),
         torch::CppFunction::makeFromBoxedFunctor(std::make_unique<AutogradBackwardKernel>(add_autograd_ops(definition))));
}

}  // namespace crossdev::ops::library
