#pragma once
// The OpSpec interface (what an op of the table can do) and the call types around it; the table
// itself is library/op_table.cpp. Every op crossdev checks for cross-device parity (seed 000). Each op is a PyTorch
// operator, torch.ops.crossdev.<op> (ops/library/register_op.h), with three implementations
// behind one OpSpec row:
//   fallback     a composition of ATen ops, the CompositeExplicitAutograd kernel: what the
//                dispatcher runs on every backend without a native kernel; the semantic reference.
//   fused        the native kernel of the call's backend (CPU: at::vec + at::parallel_for; CUDA:
//                .cu, built only against a CUDA LibTorch), reached through the dispatcher, with
//                its Autograd kernel and crossdev::<op>_backward.
//   torchscript  the seed's `@torch.jit.script` function compiled through torch::jit; failures of
//                the "Unknown device for graph fuser" class are rethrown as GraphFuserUnavailable.
// dispatch() calls the op as a user would and records which kernel ran and why fused did not.
// Exact formulas, shapes and the memory-traffic model of every op: docs/ops.md.
#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>
#include <c10/util/Exception.h>

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ops/named_values.h"

namespace crossdev::ops {

enum class Impl : std::uint8_t { Fused, Fallback, TorchScript };
const char* impl_name(Impl impl) noexcept;                 // "fused", "fallback", "torchscript"
std::optional<Impl> impl_from_name(std::string_view name) noexcept;
const std::vector<Impl>& all_impls();                      // in the order above

// One invocation. Optional tensors may be absent or undefined (both mean "not given").
struct OpCall {
  NamedValues<at::Tensor> tensors;  // by input name, e.g. "x", "shift" (named_values.h: no allocation)
  NamedValues<double> scalars;      // "eps", "p", "scale" (when a scalar), ...
  bool training = false;
  // The `Generator? generator` argument: where a random op draws its (seed, offset) stream
  // (generator_stream.h); nullopt = the default generator of the call's device.
  std::optional<at::Generator> generator;
  // The `.out` overload's output, already checked (shape, dtype, device, no overlap) and
  // contiguous; a native kernel may write its result there instead of allocating one
  // (ops/output.h). Undefined otherwise; never an input.
  at::Tensor out;

  // nullptr-free accessors: an undefined tensor when absent; `when_absent` when the scalar is absent.
  const at::Tensor& tensor(std::string_view name) const;
  bool has_tensor(std::string_view name) const;
  double scalar(std::string_view name, double when_absent) const;
  std::optional<double> maybe_scalar(std::string_view name) const;
};

// One eligibility predicate evaluated for one call, e.g.
// {"device_has_fused_kernel", false, "device mps: no fused kernel"}.
struct PredicateResult {
  std::string predicate;
  bool ok = false;
  std::string explanation;
};

struct Rejection {
  Impl impl;
  std::string reason;  // "device mps: no fused kernel (predicate device_has_fused_kernel)"
};
struct DispatchRecord {
  Impl ran = Impl::Fallback;
  std::vector<Rejection> rejected;  // fused (and why) when the fallback ran
};

// run(impl) on an implementation whose predicates fail. what() lists every failing predicate.
// A c10::ValueError (Python: ValueError, with c10's context); what() is the message without
// the C++ backtrace. The dispatcher's kernels raise the failing predicate's own error type
// instead (Predicate::error, op_definition.h).
class NotEligible : public c10::ValueError {
 public:
  NotEligible(std::string op, Impl impl, std::vector<PredicateResult> failed);
  const char* what() const noexcept override { return what_without_backtrace(); }
  const std::string& op() const noexcept { return op_; }
  Impl impl() const noexcept { return impl_; }
  const std::vector<PredicateResult>& failed() const noexcept { return failed_; }

 private:
  std::string op_;
  Impl impl_;
  std::vector<PredicateResult> failed_;
};

// The TorchScript implementation hit the "Unknown device for graph fuser" class of failure
// (seed 000). The harness reports this class rather than a generic error.
class GraphFuserUnavailable : public std::runtime_error {
 public:
  GraphFuserUnavailable(std::string op, std::string device, const std::string& original);
  const std::string& op() const noexcept { return op_; }
  const std::string& device() const noexcept { return device_; }

 private:
  std::string op_;
  std::string device_;
};

class OpSpec {
 public:
  virtual ~OpSpec() = default;
  virtual const char* name() const = 0;
  // Always contains "basic","empty","size1","odd_tail","strided","broadcast","large"; ops may add more.
  virtual std::vector<std::string> shape_sets() const = 0;
  // Portable inputs: generated on the CPU in float64 by a counter-based generator keyed by
  // (op, shape_set, seed, input name), then cast to `dtype`, then moved to `device`: the same
  // bits on every runner. Throws std::invalid_argument on an unknown shape set.
  virtual OpCall make_inputs(const std::string& shape_set, at::ScalarType dtype, c10::Device device,
                             std::uint64_t seed) const = 0;
  virtual std::vector<std::string> grad_inputs() const = 0;  // tensor names that get gradients
  // Runs exactly one implementation; throws NotEligible if its predicates fail.
  virtual at::Tensor run(Impl impl, const OpCall& call) const = 0;
  // Calls torch.ops.crossdev.<op> as a user would: the dispatcher runs the fused kernel if the
  // fused predicates pass, else the fallback; `record` says which and why (throws NotEligible if
  // the call itself is invalid).
  virtual at::Tensor dispatch(const OpCall& call, DispatchRecord* record = nullptr) const = 0;
  // Every predicate of `impl` for `call`, passing or not, in evaluation order.
  virtual std::vector<PredicateResult> eligibility(Impl impl, const OpCall& call) const = 0;
  // Convenience: the failing predicates only.
  std::vector<PredicateResult> failed_predicates(Impl impl, const OpCall& call) const;
};

// How the TorchScript implementation executes; process-wide, default Profiling. The env var
// CROSSDEV_TORCHSCRIPT_EXECUTOR=profiling|legacy_fuser sets it at first use.
//   Profiling    today's profiling executor: no CPU fusion, runs wherever ATen runs.
//   LegacyFuser  the PyTorch 1.x executor with the legacy graph fuser enabled on CPU and CUDA,
//                the setting the seed's scripts ran under. On any other device (mps, xla, meta...)
//                the fusion group fails with "Unknown device for graph fuser": GraphFuserUnavailable.
enum class ScriptExecutor : std::uint8_t { Profiling, LegacyFuser };
const char* script_executor_name(ScriptExecutor executor) noexcept;  // "profiling", "legacy_fuser"
void set_script_executor(ScriptExecutor executor);
ScriptExecutor script_executor();

const std::vector<const OpSpec*>& all_ops();
const OpSpec* find_op(std::string_view name);  // nullptr if unknown

// Dtypes an op is checked in on `device`: float32, float16, bfloat16, plus float64 where the
// device kind supports it (not MPS).
std::vector<at::ScalarType> dtypes_for_device(c10::Device device);

// Mutation testing lives outside the production library: tests/mutants registers broken
// kernels over the CPU ones through the dispatcher, only when a mutant is requested.

}  // namespace crossdev::ops
