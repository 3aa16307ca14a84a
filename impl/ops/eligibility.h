#pragma once
// The predicates every op shares. Each is a named check that explains a failure in words
// naming the input and what was expected; op folders add their own shape predicates.
#include <string>
#include <vector>

#include "ops/op_definition.h"

namespace crossdev::ops {

// Required inputs are present and defined.
Predicate required_inputs_present(const std::vector<InputSpec>& inputs);
// Floating inputs share one floating dtype; mask inputs are bool.
Predicate input_dtypes_consistent(const std::vector<InputSpec>& inputs);
// All given tensors live on one device.
Predicate inputs_on_one_device();
// The fused kernels exist for the call's device (CPU always; CUDA when built against CUDA).
Predicate device_has_fused_kernel(bool has_cuda_kernel);
// The fused kernels are instantiated for float32, float64, float16 and bfloat16.
Predicate fused_dtype_supported();

// Helpers for op shape predicates. Sizes are compared as SymInts (sym_size, sym_sizes): on
// concrete tensors that is plain integer comparison; on the Meta kernel's symbolic tensors a
// relation the shape environment cannot decide becomes a guard or a runtime assert, as
// TORCH_SYM_CHECK makes it (sym_holds).
std::string sizes_text(const at::Tensor& t);           // "[2, 8, 64]" ("[s0, 8, 64]" when symbolic)
bool sym_holds(const c10::SymBool& condition);         // SymBool::expect_true, TORCH_SYM_CHECK's test
bool sym_equal(const c10::SymInt& a, const c10::SymInt& b);         // a == b
bool sym_one_or_equal(const c10::SymInt& a, const c10::SymInt& b);  // a == 1 or a == b (a broadcasts to b)
bool broadcastable(c10::SymIntArrayRef a, c10::SymIntArrayRef b);  // numpy rules
bool broadcastable(at::IntArrayRef a, at::IntArrayRef b);
// `b` broadcasts to exactly `a` (it may not enlarge it).
bool broadcasts_to(c10::SymIntArrayRef b, c10::SymIntArrayRef a);
bool broadcasts_to(at::IntArrayRef b, at::IntArrayRef a);
// `t` broadcasts to exactly the broadcast of `a` and `b` (broadcastable(a, b) holds), computed
// dim by dim: the concrete shape predicates' test, with no shape built while it holds.
bool broadcasts_to_broadcast_of(at::IntArrayRef t, at::IntArrayRef a, at::IntArrayRef b);
// Whether `t` (defined) has symbolic sizes (the Meta kernel under torch.compile(dynamic=True),
// torch.export): a predicate may take a concrete-size path, with plain integers, when none has.
bool has_symbolic_sizes(const at::Tensor& t);
c10::Device call_device(const OpCall& call);           // device of the first defined tensor
at::ScalarType call_dtype(const OpCall& call);         // dtype of the first floating tensor

// Evaluates one predicate into `out`; returns whether it passed.
bool evaluate(const Predicate& predicate, const OpCall& call, std::vector<PredicateResult>& out);

}  // namespace crossdev::ops
