// TableOp: the OpSpec every OpDefinition becomes. Owns the predicate lists (shared, per call
// validity, fused-only) and routes run(impl) to the fallback, the autograd-wrapped fused kernel
// of the call's device, or the TorchScript runner.
#include <stdexcept>

#include "ops/eligibility.h"
#include "ops/fused_autograd.h"
#include "ops/input_maker.h"
#include "ops/op_definition.h"
#include "ops/torchscript_runner.h"

namespace crossdev::ops {
namespace {

class TableOp final : public OpSpec {
 public:
  explicit TableOp(OpDefinition definition) : def_(std::move(definition)) {
    common_ = {required_inputs_present(def_.inputs), input_dtypes_consistent(def_.inputs), inputs_on_one_device()};
    common_.insert(common_.end(), def_.validity.begin(), def_.validity.end());
    fused_ = {device_has_fused_kernel(def_.fused_cuda != nullptr), fused_dtype_supported()};
    fused_.insert(fused_.end(), def_.fused_only.begin(), def_.fused_only.end());
  }

  const char* name() const override { return def_.name; }

  std::vector<std::string> shape_sets() const override {
    std::vector<std::string> names;
    for (const ShapeSet& set : def_.shape_sets) names.emplace_back(set.name);
    return names;
  }

  OpCall make_inputs(const std::string& shape_set, at::ScalarType dtype, c10::Device device,
                     std::uint64_t seed) const override {
    for (const ShapeSet& set : def_.shape_sets) {
      if (shape_set != set.name) continue;
      InputMaker maker(def_.name, shape_set, seed);
      set.make(maker);
      return std::move(maker).finish(dtype, device);
    }
    std::string valid;
    for (const ShapeSet& set : def_.shape_sets) valid += (valid.empty() ? "" : ", ") + std::string(set.name);
    throw std::invalid_argument(std::string(def_.name) + ": unknown shape set '" + shape_set +
                                "'; expected one of: " + valid);
  }

  std::vector<std::string> grad_inputs() const override {
    std::vector<std::string> names;
    for (const InputSpec& in : def_.inputs) {
      if (in.differentiable) names.emplace_back(in.name);
    }
    return names;
  }

  std::vector<PredicateResult> eligibility(Impl impl, const OpCall& call) const override {
    std::vector<PredicateResult> results;
    results.reserve(common_.size() + fused_.size());
    // common_[0] is required_inputs_present: a call without its inputs cannot be examined further.
    if (!evaluate(common_.front(), call, results)) return results;
    for (std::size_t i = 1; i < common_.size(); ++i) evaluate(common_[i], call, results);
    if (impl == Impl::Fused) {
      for (const Predicate& predicate : fused_) evaluate(predicate, call, results);
    }
    return results;
  }

  at::Tensor run(Impl impl, const OpCall& call) const override {
    std::vector<PredicateResult> failed = failed_predicates(impl, call);
    if (!failed.empty()) throw NotEligible(def_.name, impl, std::move(failed));
    switch (impl) {
      case Impl::Fallback:
        return def_.fallback(call);
      case Impl::Fused:
        return apply_fused(def_, call_device(call).is_cuda() ? def_.fused_cuda : def_.fused_cpu, call);
      case Impl::TorchScript:
        return run_torchscript(def_, call);
    }
    throw std::logic_error("unreachable impl");
  }

 private:
  OpDefinition def_;
  std::vector<Predicate> common_;
  std::vector<Predicate> fused_;
};

}  // namespace

std::unique_ptr<OpSpec> make_table_op(OpDefinition definition) {
  return std::make_unique<TableOp>(std::move(definition));
}

}  // namespace crossdev::ops
