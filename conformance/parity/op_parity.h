#pragma once
// Parity of one op at one (shape set, dtype, device), for each implementation asked for.
//
// References (docs/parity.md):
//   golden             the fallback in float64 on the CPU, fed the inputs of the case upcast
//                      (so input rounding is not counted as error), rounded back to the dtype
//   fused_vs_fallback  a non-fallback implementation against the fallback on the same device
//                      and dtype
//   vs_cpu             an implementation on an accelerator against the same one on the CPU,
//                      from bit-identical portable inputs
// A candidate (any dispatcher op given the op's inputs, dispatcher_op.h) is checked the same way
// against a reference op instead of the fallback: golden is the reference in float64 on the CPU,
// vs_reference the reference on the same device and dtype, vs_cpu the candidate on the CPU.
// Gradients (w.r.t. every differentiable input present) are compared against the same three
// references, with a portable grad_output. Dropout rows add the structural/statistical check
// (dropout_check.h) and a reproducibility check (same seed, bitwise-equal output).
//
// References are computed lazily and cached, so the implementations of one (shape set, dtype,
// device) share them.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "ops/op_spec.h"
#include "parity/comparator.h"
#include "parity/dropout_check.h"

namespace crossdev::parity {

enum class Reference { Golden, FusedVsFallback, VsReference, VsCpu, Reproducible };
// "golden", "fused_vs_fallback", "vs_reference", "vs_cpu", "reproducible"
const char* reference_name(Reference r) noexcept;

// Anything that computes the op's output from its inputs: one of its implementations, or a
// dispatcher op (dispatcher_op.h).
using OpRunner = std::function<at::Tensor(const ops::OpCall&)>;

struct ParityConfig {
  std::uint64_t seed = 0;
  std::map<std::string, double> scalars;  // overrides of the shape set's scalars (p, scale, eps, ...)
  std::optional<bool> training;           // override of the shape set's training flag
  bool forward = true;
  bool backward = true;
  bool dropout = false;                   // the dropout checks (needs training and 0 < p < 1)
  Tolerance output_tolerance;             // already resolved for the dtype
  Tolerance grad_tolerance;
};

struct NamedComparison {
  Reference reference;
  std::string tensor;  // "out" or "grad.<input>"
  Comparison comparison;
  std::string label() const;  // "golden out", "vs_cpu grad.x"
};

enum class Verdict { Pass, Fail, NotEligible, GraphFuserUnavailable };

struct ImplOutcome {
  Verdict verdict = Verdict::Pass;
  std::string message;  // first failure, or why the implementation could not run
  std::vector<NamedComparison> comparisons;
  std::optional<DropoutCheck> dropout;
  // Worst over the comparisons (the metrics a report shows for the case).
  double max_abs = 0.0, max_rel = 0.0, max_ulp = 0.0;
  std::int64_t mismatches = 0;
  std::string first_mismatch;  // "golden out [3, 17]" of the first failing comparison
};

class OpParity {
 public:
  // References: the op's fallback.
  OpParity(const ops::OpSpec& op, std::string shape_set, at::ScalarType dtype, c10::Device device, ParityConfig config);
  // References: `reference` (named `reference_name` in messages), called with the op's inputs: a
  // candidate row's reference op.
  OpParity(const ops::OpSpec& op, std::string shape_set, at::ScalarType dtype, c10::Device device, ParityConfig config,
           std::string reference_name, OpRunner reference);
  // Runs `impl` and every applicable check. Exceptions other than the two expected classes
  // (not eligible, graph fuser unavailable) propagate to the caller.
  ImplOutcome check(ops::Impl impl);
  // Runs `candidate` (named `name` in messages) and every applicable check against the reference.
  ImplOutcome check(const std::string& name, const OpRunner& candidate);

  // What a case's record for `crossdev repro` holds (ops_repro_sample.h): its inputs, on its device in
  // its dtype, and the grad_out its backward used (undefined before a backward ran).
  const ops::OpCall& inputs() const { return call_; }
  const at::Tensor& grad_out() const { return grad_out_; }

 private:
  struct Evaluation {
    at::Tensor out;
    std::map<std::string, at::Tensor> grads;  // grad_inputs() present in the call
  };
  ops::OpCall inputs_on(c10::Device device) const;
  // With gradients when backward is on; `name` labels a missing autograd kernel.
  Evaluation evaluate(const std::string& name, const OpRunner& run, const ops::OpCall& call);
  // `same_device`: how a comparison with the reference on the case's device is labelled (none
  // for the fallback, which is that reference).
  ImplOutcome check(const std::string& name, const OpRunner& run, std::optional<Reference> same_device);
  at::Tensor grad_out_like(const at::Tensor& out);
  const Evaluation& golden();
  const Evaluation& reference_here();
  const Evaluation& on_cpu(const std::string& name, const OpRunner& run);
  void compare_all(Reference ref, const Evaluation& actual, const Evaluation& expected, ImplOutcome& outcome) const;
  void check_dropout(const Evaluation& actual, ImplOutcome& outcome);
  void check_reproducible(const OpRunner& run, const Evaluation& first, ImplOutcome& outcome);

  const ops::OpSpec& op_;
  std::string shape_set_;
  at::ScalarType dtype_;
  c10::Device device_;
  ParityConfig config_;
  std::string reference_name_;
  OpRunner reference_;      // the op's fallback, or a candidate row's reference op
  ops::OpCall call_;        // the case's inputs, on device_ in dtype_
  at::Tensor grad_out_;     // portable, CPU, dtype_; made on the first backward pass
  std::optional<Evaluation> golden_, reference_here_;
  std::map<std::string, Evaluation> on_cpu_;  // by implementation name
};

// The op's dropout probability and training flag for a call (after overrides).
double dropout_probability(const ops::OpCall& call);

}  // namespace crossdev::parity
