// crossdev::<op>_backward(Tensor grad_out, <the op's arguments>) -> one gradient per
// differentiable input. Kernels:
//   native     the op's fused backward for that backend where it has one and the call passes the
//              fused-only predicates (as the forward's native kernel does) and grad_out has the
//              output's dtype, device and shape; else derived (logged at debug level, category
//              "dispatch")
//   composite  autograd-derived: the fallback (composite reference) graph is rebuilt on the saved inputs and
//              differentiated with torch::autograd::grad (autograd is switched back on inside
//              the kernel: the dispatcher calls it below the Autograd key)
//   meta       one empty gradient shaped like each differentiable input
// An input that was not given (an optional tensor left None) gets an empty tensor in its slot.
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros_like.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/csrc/autograd/autograd.h>

#include "log/logger.h"
#include "ops/eligibility.h"
#include "ops/library/call_marshal.h"
#include "ops/library/op_predicates.h"
#include "ops/library/op_schemas.h"
#include "ops/library/register_op.h"

namespace crossdev::ops::library {
namespace {

struct BackwardCall {
  const OpDefinition& def;
  at::Tensor grad_out;
  OpCall call;
};

BackwardCall pop_backward(const OpDefinition& definition, const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::FunctionSchema& schema = op.schema();
  const std::size_t n = schema.arguments().size();
  const auto arguments = torch::jit::last(*stack, n);
  BackwardCall b{definition, arguments[0].toTensor(),
                 call_from_arguments(schema, arguments.slice(1), /*first=*/1)};
  torch::jit::drop(*stack, n);
  return b;
}

bool shares_storage(const at::Tensor& a, const at::Tensor& b) {
  return a.defined() && b.defined() && a.has_storage() && b.has_storage() && a.is_alias_of(b);
}

// True when `t` shares storage with grad_out, an input of the call or a gradient already pushed.
bool aliases_any(const at::Tensor& t, const BackwardCall& b, const torch::jit::Stack& stack, std::size_t first_grad) {
  if (shares_storage(t, b.grad_out)) return true;
  for (const auto& [name, input] : b.call.tensors) {
    if (shares_storage(t, input)) return true;
  }
  for (std::size_t k = first_grad; k < stack.size(); ++k) {
    if (shares_storage(t, stack[k].toTensor())) return true;
  }
  return false;
}

// `grads` has one entry per OpDefinition::inputs; pushes the differentiable ones. The schema says
// every gradient is a new tensor (`-> (Tensor, Tensor, ...)`, no alias annotation), so a gradient
// that shares storage with another output or an argument is copied: a fused backward may return
// views of one buffer (modulate's and layer_norm_modulate's column sums for shift and scale in
// float64), and a derived one may hand grad_out back unchanged (an identity path).
void push_grads(const BackwardCall& b, const std::vector<at::Tensor>& grads, torch::jit::Stack* stack) {
  const std::size_t first_grad = stack->size();
  for (std::size_t i = 0; i < b.def.inputs.size(); ++i) {
    const InputSpec& in = b.def.inputs[i];
    if (!in.differentiable) continue;
    const at::Tensor input = b.call.tensor(in.name);
    if (!input.defined()) {
      stack->emplace_back(at::empty({0}, b.grad_out.options()));
    } else if (i < grads.size() && grads[i].defined()) {
      at::Tensor grad = grads[i].contiguous();
      if (aliases_any(grad, b, *stack, first_grad)) grad = grad.clone(at::MemoryFormat::Contiguous);
      stack->emplace_back(std::move(grad));
    } else {
      stack->emplace_back(at::zeros_like(input, at::MemoryFormat::Contiguous));  // does not reach the output
    }
  }
}

void composite_backward(const OpDefinition& definition, const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const BackwardCall b = pop_backward(definition, op, stack);
  push_grads(b, autograd_derived_backward(b.def, b.call, b.grad_out), stack);
}

// Why a fused backward may not run on this call ("" when it may): the forward's fused
// predicates, and a grad_out shaped, typed and placed like the forward's output.
std::string fused_backward_rejection(const BackwardCall& b) {
  const std::vector<PredicateResult> rejected = failures(b.def, /*fused=*/true, b.call);
  if (!rejected.empty()) return explain(rejected);
  const at::Tensor& g = b.grad_out;
  if (!g.defined()) return "grad_out is undefined";
  const std::vector<const char*>& from = b.def.output_shape_from;
  const at::Tensor first = b.call.tensor(from.empty() ? b.def.inputs.front().name : from.front());
  const std::vector<std::int64_t> shape = output_shape(b.def, b.call);
  if (g.sizes() != at::IntArrayRef(shape)) {
    return "grad_out has shape " + sizes_text(g) + " but the output has shape " + c10::str(at::IntArrayRef(shape));
  }
  if (g.scalar_type() != first.scalar_type()) {
    return std::string("grad_out has dtype ") + c10::toString(g.scalar_type()) + " but the output has " +
           c10::toString(first.scalar_type());
  }
  if (g.device() != first.device()) return "grad_out is on " + g.device().str() + ", the inputs on " + first.device().str();
  return "";
}

template <c10::DispatchKey Key>
void native_backward(const OpDefinition& definition, const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const BackwardCall b = pop_backward(definition, op, stack);
  const BackwardFn fused = Key == c10::DispatchKey::CUDA ? b.def.fused_backward_cuda : b.def.fused_backward_cpu;
  if (fused != nullptr) {
    const std::string why = fused_backward_rejection(b);
    if (why.empty()) {
      push_grads(b, fused(b.call, b.grad_out), stack);
      return;
    }
    Logger& log = Logger::global();
    if (log.enabled(LogLevel::Debug)) {
      log.log(LogLevel::Debug, "dispatch", std::string(b.def.name) + "_backward: ran derived backward; fused rejected: " + why,
              {{"op", b.def.name}, {"impl", "autograd_derived"}});
    }
  }
  push_grads(b, autograd_derived_backward(b.def, b.call, b.grad_out), stack);
}

void meta_backward(const OpDefinition& definition, const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const BackwardCall b = pop_backward(definition, op, stack);
  std::vector<at::Tensor> grads(b.def.inputs.size());
  for (std::size_t i = 0; i < b.def.inputs.size(); ++i) {
    const at::Tensor input = b.call.tensor(b.def.inputs[i].name);
    if (input.defined() && b.def.inputs[i].differentiable) {
      grads[i] = at::empty_symint(input.sym_sizes(), input.options().memory_format(c10::MemoryFormat::Contiguous));
    }
  }
  push_grads(b, grads, stack);
}

// A boxed kernel of crossdev::<op>_backward holding the op's definition (resolved at registration,
// not looked up by name on every call).
using BoxedBackwardFn = void (*)(const OpDefinition&, const c10::OperatorHandle&, torch::jit::Stack*);
class BackwardKernel final : public c10::OperatorKernel {
 public:
  BackwardKernel(const OpDefinition& definition, BoxedBackwardFn body) : definition_(definition), body_(body) {}
  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet /*keys*/, torch::jit::Stack* stack) {
    body_(definition_, op, stack);
  }

 private:
  const OpDefinition& definition_;  // the op table's row: lives as long as the library
  BoxedBackwardFn body_;
};

torch::CppFunction backward_kernel(const OpDefinition& definition, BoxedBackwardFn body) {
  return torch::CppFunction::makeFromBoxedFunctor(std::make_unique<BackwardKernel>(definition, body));
}

}  // namespace

std::vector<at::Tensor> autograd_derived_backward(const OpDefinition& definition, const OpCall& call,
                                                  const at::Tensor& grad_out) {
  // Below the Autograd key the dispatcher excludes the autograd keys for this thread; the
  // fallback's graph must be recorded, so they are included again for this scope only.
  c10::impl::LocalDispatchKeySet tls = c10::impl::tls_local_dispatch_key_set();
  tls.excluded_ = tls.excluded_ - c10::autograd_dispatch_keyset_with_ADInplaceOrView;
  c10::impl::ForceDispatchKeyGuard autograd_on(tls);
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
  const torch::autograd::variable_list leaf_grads =
      torch::autograd::grad({out}, leaves, {grad_out}, /*retain_graph=*/false, /*create_graph=*/false,
                            /*allow_unused=*/true);
  for (std::size_t k = 0; k < leaves.size(); ++k) grads[leaf_positions[k]] = leaf_grads[k];
  return grads;
}

void register_native_backward(torch::Library& m, const OpDefinition& definition, c10::DispatchKey key) {
  m.impl(backward_name(definition).c_str(),
         backward_kernel(definition, key == c10::DispatchKey::CUDA ? &native_backward<c10::DispatchKey::CUDA>
                                                                   : &native_backward<c10::DispatchKey::CPU>));
}

void register_composite_backward(torch::Library& m, const OpDefinition& definition) {
  m.impl(backward_name(definition).c_str(), backward_kernel(definition, &composite_backward));
}

void register_meta_backward(torch::Library& m, const OpDefinition& definition) {
  m.impl(backward_name(definition).c_str(), backward_kernel(definition, &meta_backward));
}

}  // namespace crossdev::ops::library
