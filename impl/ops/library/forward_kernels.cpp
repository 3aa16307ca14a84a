// The forward kernels of crossdev::<op> and crossdev::<op>.out, one boxed function per dispatch
// key, generic over the op (the schema says how to read the arguments):
//   native     CPU / CUDA: the fused kernel (for .out, writing straight into a contiguous out
//              where the kernel supports it: OpCall::out); when a fused-only predicate fails (a dtype the
//              kernel is not instantiated for, a shape limit), the fallback, logged at debug level
//              in the "dispatch" category with every predicate's explanation
//   composite  CompositeExplicitAutograd: the fallback composition
//   meta       shapes and dtypes only; symbolic shapes pass through (torch.compile, torch.export)
// Outputs are contiguous. Invalid calls raise naming the op, the argument and what was expected.
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/ops/empty.h>

#include "log/logger.h"
#include "ops/library/call_marshal.h"
#include "ops/library/op_predicates.h"
#include "ops/library/op_schemas.h"
#include "ops/library/register_op.h"

namespace crossdev::ops::library {
namespace {

struct BoxedCall {
  const OpDefinition& def;
  OpCall call;
  at::Tensor out;  // the .out overload's out argument, else undefined
};

// Pops the op's arguments off the stack.
BoxedCall pop_call(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::FunctionSchema& schema = op.schema();
  const std::size_t n = schema.arguments().size();
  const auto arguments = torch::jit::last(*stack, n);
  BoxedCall boxed{definition_of(schema.operator_name()), call_from_arguments(schema, arguments), at::Tensor()};
  for (std::size_t i = 0; i < n; ++i) {
    if (schema.arguments()[i].name() == "out") boxed.out = arguments[i].toTensor();
  }
  torch::jit::drop(*stack, n);
  return boxed;
}

void check_valid(const BoxedCall& boxed) {
  const std::vector<PredicateResult> failed = failures(boxed.def, /*fused=*/false, boxed.call);
  if (!failed.empty()) throw NotEligible(std::string("crossdev::") + boxed.def.name, Impl::Fallback, failed);
}

bool has_symbolic_shapes(const OpCall& call) {
  for (const auto& [name, t] : call.tensors) {
    if (t.defined() && t.unsafeGetTensorImpl()->has_symbolic_sizes_strides()) return true;
  }
  return false;
}

// The .out contract, as ATen's out= overloads keep it: same dtype and device as the result, the
// result's shape (an out with no elements is resized), no overlap with an input.
void check_out(const BoxedCall& boxed, const at::Tensor& out, c10::SymIntArrayRef shape, at::ScalarType dtype,
               c10::Device device) {
  const std::string op = std::string("crossdev::") + boxed.def.name + ".out";
  TORCH_CHECK(out.scalar_type() == dtype, op, ": out has dtype ", out.scalar_type(), " but the result is ", dtype);
  TORCH_CHECK(out.device() == device, op, ": out is on ", out.device(), " but the inputs are on ", device);
  if (out.sym_sizes() != shape) {
    TORCH_CHECK(out.sym_numel() == 0, op, ": out has shape ", out.sym_sizes(), " but the result has shape ", shape,
                "; pass an out of that shape, or an empty one to be resized");
    out.resize__symint(shape);
  }
  if (out.unsafeGetTensorImpl()->has_symbolic_sizes_strides() || has_symbolic_shapes(boxed.call)) return;  // symbolic: the real kernel checks overlap
  at::assert_no_internal_overlap(out);
  for (const auto& [name, t] : boxed.call.tensors) {
    if (!t.defined()) continue;
    TORCH_CHECK(at::get_overlap_status(out, t) == at::MemOverlapStatus::No, op, ": out overlaps input '", name,
                "'; the out= overload needs an output that shares no memory with its inputs");
  }
}

// The functional overload returns its result; .out returns nothing (`-> ()`, op_schemas.h): the
// result is written into out.
void push_result(BoxedCall& boxed, at::Tensor result, torch::jit::Stack* stack) {
  result = result.contiguous();
  if (!boxed.out.defined()) {
    stack->emplace_back(std::move(result));
    return;
  }
  if (result.is_same(boxed.out)) return;  // the kernel wrote into out (OpCall::out)
  check_out(boxed, boxed.out, result.sym_sizes(), result.scalar_type(), result.device());
  boxed.out.copy_(result);
}

KernelFn native_kernel(const OpDefinition& def, c10::DispatchKey key) {
  return key == c10::DispatchKey::CUDA ? def.fused_cuda : def.fused_cpu;
}

template <c10::DispatchKey Key>
void native_forward(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  BoxedCall boxed = pop_call(op, stack);
  check_valid(boxed);
  const std::vector<PredicateResult> rejected = failures(boxed.def, /*fused=*/true, boxed.call);
  at::Tensor result;
  if (rejected.empty()) {
    if (boxed.out.defined()) {
      // Checked (and resized) before the kernel runs, so a contiguous out can take the result
      // directly: kernel-only .out calls allocate and copy nothing.
      const at::Tensor first = boxed.call.tensor(boxed.def.output_shape_from.empty() ? boxed.def.inputs.front().name
                                                                                       : boxed.def.output_shape_from.front());
      const std::vector<std::int64_t> shape = output_shape(boxed.def, boxed.call);
      check_out(boxed, boxed.out, c10::fromIntArrayRefSlow(shape), first.scalar_type(), first.device());
      if (boxed.out.is_contiguous()) boxed.call.out = boxed.out;
    }
    result = native_kernel(boxed.def, Key)(boxed.call);
  } else {
    Logger& log = Logger::global();
    if (log.enabled(LogLevel::Debug)) {
      log.log(LogLevel::Debug, "dispatch",
              std::string(boxed.def.name) + ": ran fallback; fused rejected: " + explain(rejected),
              {{"op", boxed.def.name}, {"impl", "fallback"}});
    }
    result = boxed.def.fallback(boxed.call);
  }
  push_result(boxed, std::move(result), stack);
}

void composite_forward(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  BoxedCall boxed = pop_call(op, stack);
  check_valid(boxed);
  push_result(boxed, boxed.def.fallback(boxed.call), stack);
}

void meta_forward(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  BoxedCall boxed = pop_call(op, stack);
  if (!has_symbolic_shapes(boxed.call)) check_valid(boxed);  // symbolic: the real kernel checks
  const std::vector<const char*>& from = boxed.def.output_shape_from;
  const at::Tensor first = boxed.call.tensor(from.empty() ? boxed.def.inputs.front().name : from.front());
  TORCH_CHECK(first.defined(), "crossdev::", boxed.def.name, ": input '", (from.empty() ? boxed.def.inputs.front().name : from.front()),
              "' is required but missing");
  c10::SymDimVector shape(first.sym_sizes().begin(), first.sym_sizes().end());
  for (std::size_t i = 1; i < from.size(); ++i) {
    const at::Tensor t = boxed.call.tensor(from[i]);
    if (t.defined()) shape = at::infer_size_symdimvector(shape, t.sym_sizes());
  }
  if (boxed.out.defined()) {  // .out returns nothing
    check_out(boxed, boxed.out, shape, first.scalar_type(), first.device());
    return;
  }
  stack->emplace_back(at::empty_symint(shape, first.options().memory_format(c10::MemoryFormat::Contiguous)));
}

}  // namespace

void register_native_kernels(torch::Library& m, const OpDefinition& definition, c10::DispatchKey key) {
  if (native_kernel(definition, key) == nullptr) return;  // e.g. CUDA kernels not built
  const auto kernel = [key] {
    return key == c10::DispatchKey::CUDA ? torch::CppFunction::makeFromBoxedFunction<&native_forward<c10::DispatchKey::CUDA>>()
                                         : torch::CppFunction::makeFromBoxedFunction<&native_forward<c10::DispatchKey::CPU>>();
  };
  m.impl(definition.name, kernel());
  m.impl((std::string(definition.name) + ".out").c_str(), kernel());
  register_native_backward(m, definition, key);
}

void register_composite_kernels(torch::Library& m, const OpDefinition& definition) {
  m.impl(definition.name, torch::CppFunction::makeFromBoxedFunction<&composite_forward>());
  m.impl((std::string(definition.name) + ".out").c_str(), torch::CppFunction::makeFromBoxedFunction<&composite_forward>());
  register_composite_backward(m, definition);
}

void register_meta_kernels(torch::Library& m, const OpDefinition& definition) {
  m.impl(definition.name, torch::CppFunction::makeFromBoxedFunction<&meta_forward>());
  m.impl((std::string(definition.name) + ".out").c_str(), torch::CppFunction::makeFromBoxedFunction<&meta_forward>());
  register_meta_backward(m, definition);
}

}  // namespace crossdev::ops::library
