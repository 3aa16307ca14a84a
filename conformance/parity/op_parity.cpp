#include "parity/op_parity.h"

#include "ops/generator_stream.h"

#include <algorithm>
#include <stdexcept>

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <torch/csrc/autograd/function.h>

#include "ops/portable_random.h"

namespace crossdev::parity {
namespace {

// Floating tensors to `dtype`, everything to `device`; bool masks keep their dtype. A random call's
// generator is the one the harness gives a case with `seed` on `device` (generator_stream.h): the
// same stream as the original device's, so the golden drops the same elements.
ops::OpCall converted(const ops::OpCall& call, at::ScalarType dtype, c10::Device device, std::uint64_t seed) {
  ops::OpCall out = call;
  if (out.generator.has_value() && out.generator->device().type() != device.type()) {
    out.generator = ops::generator_stream::harness_generator(device, seed);
  }
  for (auto& [name, t] : out.tensors) {
    if (!t.defined()) continue;
    // Cast where the target dtype surely exists: after the move when leaving for the CPU (the
    // source device may lack float64, as MPS does), before it otherwise.
    if (device.is_cpu()) {
      t = t.cpu();
      if (t.is_floating_point()) t = t.to(dtype);
    } else {
      t = (t.is_floating_point() ? t.to(dtype) : t).to(device);
    }
  }
  return out;
}

at::Tensor cpu_double(const ops::OpCall& call, const std::string& name) {
  const at::Tensor t = call.tensor(name);
  return t.defined() ? t.cpu().to(at::kDouble) : t;  // to CPU first: a device may lack float64
}

}  // namespace

const char* reference_name(Reference r) noexcept {
  switch (r) {
    case Reference::Golden: return "golden";
    case Reference::FusedVsFallback: return "fused_vs_fallback";
    case Reference::VsReference: return "vs_reference";
    case Reference::VsCpu: return "vs_cpu";
    case Reference::Reproducible: return "reproducible";
  }
  return "?";
}

std::string NamedComparison::label() const { return std::string(reference_name(reference)) + " " + tensor; }

double dropout_probability(const ops::OpCall& call) { return call.training ? call.scalar("p", 0.0) : 0.0; }

OpParity::OpParity(const ops::OpSpec& op, std::string shape_set, at::ScalarType dtype, c10::Device device,
                   ParityConfig config)
    : OpParity(op, std::move(shape_set), dtype, device, std::move(config), ops::impl_name(ops::Impl::Fallback),
               [&op](const ops::OpCall& call) { return op.run(ops::Impl::Fallback, call); }) {}

OpParity::OpParity(const ops::OpSpec& op, std::string shape_set, at::ScalarType dtype, c10::Device device,
                   ParityConfig config, std::string reference_name, OpRunner reference)
    : op_(op),
      shape_set_(std::move(shape_set)),
      dtype_(dtype),
      device_(device),
      config_(std::move(config)),
      reference_name_(std::move(reference_name)),
      reference_(std::move(reference)) {
  call_ = inputs_on(device_);
}

at::Tensor OpParity::grad_out_like(const at::Tensor& out) {
  // Portable like the inputs, rounded to the dtype under test once, so every evaluation
  // (golden included) back-propagates the same values.
  if (!grad_out_.defined()) {
    const std::uint64_t key = ops::portable_random::stream_key({op_.name(), shape_set_, "grad_out"}, config_.seed);
    grad_out_ = ops::portable_random::uniform_tensor(key, out.sizes(), -1.0, 1.0).to(dtype_);
  }
  return grad_out_.to(out.scalar_type()).to(out.device());
}

ops::OpCall OpParity::inputs_on(c10::Device device) const {
  ops::OpCall call = op_.make_inputs(shape_set_, dtype_, device, config_.seed);
  for (const auto& [name, value] : config_.scalars) call.scalars[name] = value;
  if (config_.training) call.training = *config_.training;
  return call;
}

OpParity::Evaluation OpParity::evaluate(const std::string& name, const OpRunner& run, const ops::OpCall& call_in) {
  c10::AutoGradMode grad_mode(config_.backward);
  ops::OpCall call = call_in;
  std::vector<std::pair<std::string, at::Tensor>> leaves;
  if (config_.backward) {
    for (const std::string& name : op_.grad_inputs()) {
      if (!call.has_tensor(name) || !call.tensors[name].is_floating_point()) continue;
      at::Tensor leaf = call.tensors[name].detach().requires_grad_(true);
      call.tensors[name] = leaf;
      leaves.emplace_back(name, leaf);
    }
  }
  Evaluation e;
  const at::Tensor out = run(call);
  e.out = out.detach();
  // Nothing to back-propagate through: comparing no gradients would pass silently. PyTorch's
  // fallback for an op without an autograd kernel either leaves the output without grad_fn or
  // (its default "warn" mode) gives it a WarnNotImplemented node that yields no gradients.
  const bool no_autograd_kernel =
      !out.requires_grad() || (out.grad_fn() && out.grad_fn()->name() == "torch::autograd::WarnNotImplemented");
  if (!leaves.empty() && no_autograd_kernel) {
    std::string inputs;
    for (const auto& leaf : leaves) inputs += (inputs.empty() ? "" : ", ") + leaf.first;
    throw std::runtime_error(name + ": no gradient can flow back to its inputs (" + inputs +
                             "): the op has no autograd kernel (register one, or check forward only with "
                             "`checks: [forward]`)");
  }
  if (!leaves.empty()) {
    out.backward(grad_out_like(out));
    for (const auto& [name, leaf] : leaves) {
      // An input that does not reach the output gets a zero gradient, as torch.autograd.grad
      // with materialize_grads=True would report it.
      e.grads[name] = leaf.grad().defined() ? leaf.grad() : at::zeros_like(leaf.detach());
    }
  }
  return e;
}

const OpParity::Evaluation& OpParity::golden() {
  if (!golden_) golden_ = evaluate(reference_name_, reference_, converted(call_, at::kDouble, c10::kCPU, config_.seed));
  return *golden_;
}

const OpParity::Evaluation& OpParity::reference_here() {
  if (!reference_here_) reference_here_ = evaluate(reference_name_, reference_, call_);
  return *reference_here_;
}

const OpParity::Evaluation& OpParity::on_cpu(const std::string& name, const OpRunner& run) {
  auto it = on_cpu_.find(name);
  if (it == on_cpu_.end()) it = on_cpu_.emplace(name, evaluate(name, run, inputs_on(c10::kCPU))).first;
  return it->second;
}

void OpParity::compare_all(Reference ref, const Evaluation& actual, const Evaluation& expected, ImplOutcome& outcome) const {
  const auto add = [&](const std::string& tensor, const at::Tensor& a, const at::Tensor& e, const Tolerance& tol) {
    CompareOptions options;
    options.tolerance = tol;
    // The golden reference is float64: round it to the dtype under test, as torch's OpInfo tests do.
    outcome.comparisons.push_back({ref, tensor, compare(a, e.to(a.scalar_type()), options)});
  };
  if (config_.forward) add("out", actual.out, expected.out, config_.output_tolerance);
  if (config_.backward) {
    for (const auto& [name, grad] : actual.grads) {
      auto it = expected.grads.find(name);
      if (it != expected.grads.end()) add("grad." + name, grad, it->second, config_.grad_tolerance);
    }
  }
}

void OpParity::check_dropout(const Evaluation& actual, ImplOutcome& outcome) {
  // out = scale * dropout(x + bias) + residual: the two values an element may take, in float64
  // from the case's own (rounded) inputs.
  const double p = dropout_probability(call_);
  at::Tensor x = cpu_double(call_, "x");
  if (const at::Tensor bias = cpu_double(call_, "bias"); bias.defined()) x = x + bias;
  at::Tensor kept = x / (1.0 - p);
  if (const at::Tensor scale = cpu_double(call_, "scale"); scale.defined()) {
    kept = kept * scale;
  } else if (const auto s = call_.maybe_scalar("scale_value")) {
    kept = kept * *s;
  }
  at::Tensor dropped = at::zeros_like(kept);
  if (const at::Tensor residual = cpu_double(call_, "residual"); residual.defined()) {
    kept = kept + residual;
    dropped = dropped + residual;
  }
  outcome.dropout = parity::check_dropout(actual.out, kept.expand(actual.out.sizes()),
                                          dropped.expand(actual.out.sizes()), p, config_.output_tolerance);
}

void OpParity::check_reproducible(const OpRunner& run, const Evaluation& first, ImplOutcome& outcome) {
  c10::NoGradGuard no_grad;
  CompareOptions exact;
  exact.tolerance = Tolerance{0.0, 0.0};
  exact.equal_nan = true;
  const at::Tensor again = run(call_);
  outcome.comparisons.push_back({Reference::Reproducible, "out", compare(again, first.out, exact)});
}

ImplOutcome OpParity::check(ops::Impl impl) {
  const OpRunner run = [this, impl](const ops::OpCall& call) { return op_.run(impl, call); };
  // The fallback is its own same-device reference: nothing to compare it with there.
  return check(ops::impl_name(impl), run,
               impl == ops::Impl::Fallback ? std::nullopt : std::optional<Reference>(Reference::FusedVsFallback));
}

ImplOutcome OpParity::check(const std::string& name, const OpRunner& candidate) {
  return check(name, candidate, Reference::VsReference);
}

ImplOutcome OpParity::check(const std::string& name, const OpRunner& run, std::optional<Reference> same_device) {
  ImplOutcome outcome;
  Evaluation actual;
  try {
    actual = evaluate(name, run, call_);
  } catch (const ops::NotEligible& e) {
    outcome.verdict = Verdict::NotEligible;
    outcome.message = e.what();
    return outcome;
  } catch (const ops::GraphFuserUnavailable& e) {
    outcome.verdict = Verdict::GraphFuserUnavailable;
    outcome.message = e.what();
    return outcome;
  }

  compare_all(Reference::Golden, actual, golden(), outcome);
  if (same_device) compare_all(*same_device, actual, reference_here(), outcome);
  if (device_.type() != c10::DeviceType::CPU) compare_all(Reference::VsCpu, actual, on_cpu(name, run), outcome);
  if (config_.dropout) {
    check_dropout(actual, outcome);
    check_reproducible(run, actual, outcome);
  }

  for (const NamedComparison& c : outcome.comparisons) {
    outcome.max_abs = std::max(outcome.max_abs, c.comparison.max_abs);
    outcome.max_rel = std::max(outcome.max_rel, c.comparison.max_rel);
    outcome.max_ulp = std::max(outcome.max_ulp, c.comparison.max_ulp);
    outcome.mismatches += c.comparison.mismatches;
    if (!c.comparison.pass && outcome.verdict == Verdict::Pass) {
      outcome.verdict = Verdict::Fail;
      outcome.message = c.label() + ": " + c.comparison.summary();
      outcome.first_mismatch = c.label() + " " + c.comparison.index_str();
    }
  }
  if (outcome.dropout && !outcome.dropout->pass && outcome.verdict == Verdict::Pass) {
    outcome.verdict = Verdict::Fail;
    outcome.message = "dropout: " + outcome.dropout->summary();
  }
  return outcome;
}

}  // namespace crossdev::parity
