// The forward kernels of crossdev::<op> and crossdev::<op>.out, one per dispatch key, generic
// over the op (the typed wrappers of typed_kernels.h copy the arguments into an OpCall):
//   native     CPU / CUDA: the fused kernel (for .out, writing straight into a contiguous out
//              where the kernel supports it: OpCall::out); when a fused-only predicate fails (a
//              dtype the kernel is not instantiated for, a shape limit), the fallback, logged at
//              debug level in the "dispatch" category with every predicate's explanation. The
//              kernel is running, so whether the backend has one is not asked.
//   composite  CompositeExplicitAutograd: the fallback composition
//   meta       shapes and dtypes only; the same predicates validate symbolic shapes
//              (torch.compile(dynamic=True), torch.export): a relation they cannot decide
//              becomes a guard or a runtime assert (eligibility.h's sym_holds)
// Outputs are contiguous. Invalid calls raise the failing predicate's ATen error type
// (ValueError, TypeError, IndexError or RuntimeError in Python) naming the op, the argument and
// what was expected; nothing is looked up by name, locked or formatted while a call is valid.
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>

#include "log/logger.h"
#include "ops/eligibility.h"
#include "ops/library/call_marshal.h"
#include "ops/library/op_predicates.h"
#include "ops/library/op_schemas.h"
#include "ops/library/register_op.h"

namespace crossdev::ops::library {
namespace {

// The input whose shape (broadcast with the rest of output_shape_from) and dtype the result has.
const char* primary_input(const OpDefinition& def) {
  return def.output_shape_from.empty() ? def.inputs.front().name : def.output_shape_from.front();
}

// The result's shape: the broadcast of output_shape_from's inputs, symbolic where they are.
c10::SymDimVector result_shape(const OpDefinition& def, const OpCall& call) {
  const at::Tensor& first = call.tensor(primary_input(def));
  c10::SymDimVector shape(first.sym_sizes().begin(), first.sym_sizes().end());
  for (std::size_t i = 1; i < def.output_shape_from.size(); ++i) {
    const at::Tensor& t = call.tensor(def.output_shape_from[i]);
    if (t.defined()) shape = at::infer_size_symdimvector(shape, t.sym_sizes());
  }
  return shape;
}

// The .out contract, as ATen's out= overloads keep it: same dtype and device as the result; an
// out of another shape is resized, with the warning at::native::resize_output gives when it
// had elements; no overlap with an input.
void prepare_out(const OpDefinition& def, const OpCall& call, const at::Tensor& out) {
  const at::Tensor& first = call.tensor(primary_input(def));
  TORCH_CHECK(out.scalar_type() == first.scalar_type(), "crossdev::", def.name, ".out: out has dtype ",
              out.scalar_type(), " but the result is ", first.scalar_type());
  TORCH_CHECK(out.device() == first.device(), "crossdev::", def.name, ".out: out is on ", out.device(),
              " but the inputs are on ", first.device());
  at::native::resize_output_symint(out, result_shape(def, call));
  // Overlap needs concrete sizes (get_overlap_status reads numel()): under symbolic shapes (Meta,
  // FakeTensor) it is left to the real kernel, which runs this check with the real sizes.
  if (out.unsafeGetTensorImpl()->has_symbolic_sizes_strides()) return;
  for (const auto& [name, t] : call.tensors) {
    if (t.defined() && t.unsafeGetTensorImpl()->has_symbolic_sizes_strides()) return;
  }
  at::assert_no_internal_overlap(out);
  for (const auto& [name, t] : call.tensors) {
    TORCH_CHECK(!t.defined() || at::get_overlap_status(out, t) == at::MemOverlapStatus::No, "crossdev::", def.name,
                ".out: out overlaps input '", name, "'; the out= overload needs an output that shares no memory with its inputs");
  }
}

void log_fallback(const OpDefinition& def, const OpCall& call) {
  Logger& log = Logger::global();
  if (!log.enabled(LogLevel::Debug)) return;
  std::vector<PredicateResult> rejected;
  for (const Predicate& p : def.checks.kernel_limits) evaluate(p, call, rejected);
  std::vector<PredicateResult> failed;
  for (PredicateResult& r : rejected) {
    if (!r.ok) failed.push_back(std::move(r));
  }
  log.log(LogLevel::Debug, "dispatch", std::string(def.name) + ": ran fallback; fused rejected: " + explain(failed),
          {{"op", def.name}, {"impl", "fallback"}});
}

// The fused kernel's result, or the fallback's when a fused-only limit rejects the call.
at::Tensor native_result(const OpDefinition& def, c10::DispatchKey key, const OpCall& call) {
  if (first_failure(def.checks.kernel_limits, call) != nullptr) {
    log_fallback(def, call);
    return def.fallback(call).contiguous();
  }
  return native_kernel(def, key)(call).contiguous();
}

void write_out(const at::Tensor& out, const at::Tensor& result) {
  if (!result.is_same(out)) out.copy_(result);  // else the kernel wrote into out (OpCall::out)
}

}  // namespace

KernelFn native_kernel(const OpDefinition& definition, c10::DispatchKey key) {
  return key == c10::DispatchKey::CUDA ? definition.fused_cuda : definition.fused_cpu;
}

bool out_overload_returns_out(const OpDefinition& definition) {
  return !torch::schema(out_schema(definition).c_str()).returns().empty();
}

at::Tensor native_forward(const OpDefinition& definition, c10::DispatchKey key, OpCall& call) {
  check_valid_call(definition, "", call);
  return native_result(definition, key, call);
}

void native_forward_out(const OpDefinition& definition, c10::DispatchKey key, OpCall& call, const at::Tensor& out) {
  check_valid_call(definition, ".out", call);
  // Checked (and resized) before the kernel runs, so a contiguous out takes the result directly:
  // kernel-only .out calls allocate and copy nothing.
  prepare_out(definition, call, out);
  if (out.is_contiguous()) call.out = out;
  write_out(out, native_result(definition, key, call));
}

at::Tensor composite_forward(const OpDefinition& definition, OpCall& call) {
  check_valid_call(definition, "", call);
  return definition.fallback(call).contiguous();
}

void composite_forward_out(const OpDefinition& definition, OpCall& call, const at::Tensor& out) {
  check_valid_call(definition, ".out", call);
  prepare_out(definition, call, out);
  write_out(out, definition.fallback(call));
}

at::Tensor meta_forward(const OpDefinition& definition, OpCall& call) {
  check_valid_call(definition, "", call);
  const at::Tensor& first = call.tensor(primary_input(definition));
  return at::empty_symint(result_shape(definition, call), first.options().memory_format(c10::MemoryFormat::Contiguous));
}

void meta_forward_out(const OpDefinition& definition, OpCall& call, const at::Tensor& out) {
  check_valid_call(definition, ".out", call);
  prepare_out(definition, call, out);
}

}  // namespace crossdev::ops::library
