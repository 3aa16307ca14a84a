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
// Gradients (w.r.t. every differentiable input present) are compared against the same three
// references, with a portable grad_output. Dropout rows add the structural/statistical check
// (dropout_check.h) and a reproducibility check (same seed, bitwise-equal output).
//
// References are computed lazily and cached, so the implementations of one (shape set, dtype,
// device) share them.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "ops/op_registry.h"
#include "parity/comparator.h"
#include "parity/dropout_check.h"

namespace crossdev::parity {

enum class Reference { Golden, FusedVsFallback, VsCpu, Reproducible };
const char* reference_name(Reference r) noexcept;  // "golden", "fused_vs_fallback", "vs_cpu", "reproducible"

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
  OpParity(const ops::OpSpec& op, std::string shape_set, at::ScalarType dtype, c10::Device device, ParityConfig config);
  // Runs `impl` and every applicable check. Exceptions other than the two expected classes
  // (not eligible, graph fuser unavailable) propagate to the caller.
  ImplOutcome check(ops::Impl impl);

 private:
  struct Evaluation {
    at::Tensor out;
    std::map<std::string, at::Tensor> grads;  // grad_inputs() present in the call
  };
  ops::OpCall inputs_on(c10::Device device) const;
  Evaluation evaluate(ops::Impl impl, const ops::OpCall& call);  // with gradients when backward is on
  at::Tensor grad_out_like(const at::Tensor& out);
  const Evaluation& golden();
  const Evaluation& fallback_here();
  const Evaluation& on_cpu(ops::Impl impl);
  void compare_all(Reference ref, const Evaluation& actual, const Evaluation& expected, ImplOutcome& outcome) const;
  void check_dropout(const Evaluation& actual, ImplOutcome& outcome);
  void check_reproducible(ops::Impl impl, const Evaluation& first, ImplOutcome& outcome);

  const ops::OpSpec& op_;
  std::string shape_set_;
  at::ScalarType dtype_;
  c10::Device device_;
  ParityConfig config_;
  ops::OpCall call_;        // the case's inputs, on device_ in dtype_
  at::Tensor grad_out_;     // portable, CPU, dtype_; made on the first backward pass
  std::optional<Evaluation> golden_, fallback_here_;
  std::map<ops::Impl, Evaluation> on_cpu_;
};

// The op's dropout probability and training flag for a call (after overrides).
double dropout_probability(const ops::OpCall& call);

}  // namespace crossdev::parity
