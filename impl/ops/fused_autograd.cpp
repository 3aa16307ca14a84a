#include "ops/fused_autograd.h"

#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

namespace crossdev::ops {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Non-tensor arguments of apply(); they receive undefined gradients.
constexpr std::size_t kLeadingArgs = 3;

class FusedFunction : public torch::autograd::Function<FusedFunction> {
 public:
  // `inputs` holds the defined tensors of `call`, in OpDefinition::inputs order.
  static at::Tensor forward(AutogradContext* ctx, const OpDefinition* definition, KernelFn kernel,
                            const OpCall* call, at::TensorList inputs) {
    std::vector<std::int64_t> positions;
    for (std::size_t i = 0; i < definition->inputs.size(); ++i) {
      if (call->has_tensor(definition->inputs[i].name)) positions.push_back(static_cast<std::int64_t>(i));
    }
    ctx->save_for_backward(inputs.vec());
    ctx->saved_data["definition"] = reinterpret_cast<std::int64_t>(definition);
    ctx->saved_data["positions"] = positions;
    c10::impl::GenericDict scalars(c10::StringType::get(), c10::FloatType::get());
    for (const auto& [name, value] : call->scalars) scalars.insert(name, value);
    ctx->saved_data["scalars"] = scalars;
    ctx->saved_data["training"] = call->training;
    ctx->saved_data["seed"] = static_cast<std::int64_t>(call->seed);
    return kernel(*call);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto* definition = reinterpret_cast<const OpDefinition*>(ctx->saved_data["definition"].toInt());
    const std::vector<std::int64_t> positions = ctx->saved_data["positions"].toIntVector();
    const variable_list saved = ctx->get_saved_variables();

    OpCall call;
    for (std::size_t k = 0; k < positions.size(); ++k) {
      call.tensors[definition->inputs[static_cast<std::size_t>(positions[k])].name] = saved[k];
    }
    for (const auto& entry : ctx->saved_data["scalars"].toGenericDict()) {
      call.scalars[entry.key().toStringRef()] = entry.value().toDouble();
    }
    call.training = ctx->saved_data["training"].toBool();
    call.seed = static_cast<std::uint64_t>(ctx->saved_data["seed"].toInt());

    const bool fused_backward = definition->fused_backward_cpu != nullptr && grad_outputs[0].device().is_cpu();
    const std::vector<at::Tensor> grads = fused_backward
                                              ? definition->fused_backward_cpu(call, grad_outputs[0])
                                              : fallback_derived_backward(*definition, call, grad_outputs[0]);
    variable_list out(kLeadingArgs + positions.size());
    for (std::size_t k = 0; k < positions.size(); ++k) {
      // needs_input_grad counts tensor arguments only; `out` has a slot for every argument.
      if (ctx->needs_input_grad(k)) out[kLeadingArgs + k] = grads[static_cast<std::size_t>(positions[k])];
    }
    return out;
  }
};

}  // namespace

at::Tensor apply_fused(const OpDefinition& definition, KernelFn forward, const OpCall& call) {
  std::vector<at::Tensor> inputs;
  for (const InputSpec& in : definition.inputs) {
    if (call.has_tensor(in.name)) inputs.push_back(call.tensor(in.name));
  }
  return FusedFunction::apply(&definition, forward, &call, at::TensorList(inputs));
}

std::vector<at::Tensor> fallback_derived_backward(const OpDefinition& definition, const OpCall& call,
                                                  const at::Tensor& grad_out) {
  at::AutoGradMode enable_grad(true);
  OpCall leaf_call = call;
  std::vector<at::Tensor> leaves;
  std::vector<std::size_t> leaf_positions;
  for (std::size_t i = 0; i < definition.inputs.size(); ++i) {
    const InputSpec& in = definition.inputs[i];
    if (!in.differentiable || !call.has_tensor(in.name)) continue;
    at::Tensor leaf = call.tensor(in.name).detach().requires_grad_(true);
    leaf_call.tensors[in.name] = leaf;
    leaves.push_back(leaf);
    leaf_positions.push_back(i);
  }
  std::vector<at::Tensor> grads(definition.inputs.size());
  if (leaves.empty()) return grads;
  const at::Tensor out = definition.fallback(leaf_call);
  const variable_list leaf_grads = torch::autograd::grad({out}, leaves, {grad_out}, /*retain_graph=*/false,
                                                         /*create_graph=*/false, /*allow_unused=*/true);
  for (std::size_t k = 0; k < leaves.size(); ++k) grads[leaf_positions[k]] = leaf_grads[k];
  return grads;
}

}  // namespace crossdev::ops
