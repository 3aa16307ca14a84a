// TableOp: the OpSpec of one registered OpDefinition. The harness's view of an op; every
// implementation but TorchScript goes through the PyTorch dispatcher (library/):
//   fused     crossdev::<op> called through the dispatcher where the call's backend has a native
//             crossdev kernel (CPU; CUDA when built): autograd, the backend kernel and
//             crossdev::<op>_backward are the ones a PyTorch user gets
//   fallback  the CompositeExplicitAutograd kernel: reached through the dispatcher on backends
//             without a native kernel (sim, MPS, XPU, XLA: what users get there), and called by
//             its key on the others, where a native kernel would win; autograd is then ATen's
//             over the composition, the semantic reference
//   torchscript the seed's scripted function (torchscript_runner.h)
// run() and dispatch() hand the op a copy of OpCall::generator, never the generator itself: every
// implementation run on one call draws the same random stream (the harness's parity) and running
// it twice gives the same result (its reproducibility check).
#include <stdexcept>

#include "log/logger.h"
#include "ops/eligibility.h"
#include "ops/input_maker.h"
#include "ops/library/call_marshal.h"
#include "ops/library/op_predicates.h"
#include "ops/op_definition.h"
#include "ops/torchscript_runner.h"

namespace crossdev::ops {
namespace {

// `call` with its generator replaced by a copy of its current state.
OpCall with_generator_copy(const OpCall& call) {
  OpCall copy = call;
  if (call.generator.has_value() && call.generator->defined()) copy.generator = call.generator->clone();
  return copy;
}

class TableOp final : public OpSpec {
 public:
  explicit TableOp(const OpDefinition& definition) : def_(definition) {}

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
    throw std::invalid_argument(std::string(def_.name) + ": unknown shape set '" + shape_set +
                                "'; expected one of: " + c10::Join(", ", shape_sets()));
  }

  std::vector<std::string> grad_inputs() const override {
    std::vector<std::string> names;
    for (const InputSpec& in : def_.inputs) {
      if (in.differentiable) names.emplace_back(in.name);
    }
    return names;
  }

  std::vector<PredicateResult> eligibility(Impl impl, const OpCall& call) const override {
    return library::eligibility(def_, impl == Impl::Fused, call);
  }

  at::Tensor run(Impl impl, const OpCall& given) const override {
    const OpCall call = with_generator_copy(given);
    std::vector<PredicateResult> failed = failed_predicates(impl, call);
    if (!failed.empty()) throw NotEligible(def_.name, impl, std::move(failed));
    switch (impl) {
      case Impl::Fused:
        return library::call_op(def_, call);
      case Impl::Fallback:
        if (library::has_native_kernel(def_, call_device(call))) {
          return library::call_op_kernel(def_, call, c10::DispatchKey::CompositeExplicitAutograd);
        }
        return library::call_op(def_, call);
      case Impl::TorchScript:
        return run_torchscript(def_, call);
    }
    throw std::logic_error("unreachable impl");
  }

  at::Tensor dispatch(const OpCall& call, DispatchRecord* record) const override {
    DispatchRecord local;
    DispatchRecord& rec = record != nullptr ? *record : local;
    rec = DispatchRecord{};
    std::vector<PredicateResult> common = failed_predicates(Impl::Fallback, call);
    if (!common.empty()) throw NotEligible(def_.name, Impl::Fallback, std::move(common));
    // The same predicates the native kernel evaluates, so the record cannot disagree with it.
    const std::vector<PredicateResult> rejected = failed_predicates(Impl::Fused, call);
    rec.ran = rejected.empty() ? Impl::Fused : Impl::Fallback;
    if (!rejected.empty()) rec.rejected.push_back({Impl::Fused, library::explain(rejected)});
    Logger& log = Logger::global();
    if (log.enabled(LogLevel::Debug)) {
      std::string message = std::string(def_.name) + ": ran " + impl_name(rec.ran);
      for (const Rejection& r : rec.rejected) message += "; " + std::string(impl_name(r.impl)) + " rejected: " + r.reason;
      log.log(LogLevel::Debug, "dispatch", message, {{"op", def_.name}, {"impl", impl_name(rec.ran)}});
    }
    return library::call_op(def_, with_generator_copy(call));
  }

 private:
  const OpDefinition& def_;
};

}  // namespace

std::unique_ptr<OpSpec> make_table_op(const OpDefinition& definition) { return std::make_unique<TableOp>(definition); }

}  // namespace crossdev::ops
