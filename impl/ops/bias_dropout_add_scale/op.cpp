#include <ATen/ExpandUtils.h>
#include <ATen/Functions.h>
#include <ATen/TensorOperators.h>
#include <c10/util/accumulate.h>

#include <utility>

#include "ops/library/register_op.h"
#include "ops/bias_dropout_add_scale/kernels.h"
#include "ops/eligibility.h"
#include "ops/input_maker.h"
#include "ops/portable_random.h"

namespace crossdev::ops {
namespace {

// What the shapes predicate says of scale or residual (`t`, named `name`) when it does not
// broadcast to the shape of x + bias without enlarging it.
std::string enlarges_failure(const char* name, const at::Tensor& t, const at::Tensor& x, const at::Tensor& bias) {
  const c10::SymDimVector shape = bias.defined() ? at::infer_size_symdimvector(x.sym_sizes(), bias.sym_sizes())
                                                 : c10::SymDimVector(x.sym_sizes().begin(), x.sym_sizes().end());
  return std::string(name) + " " + sizes_text(t) + " must broadcast to the shape of x + bias " +
         c10::str(c10::SymIntArrayRef(shape)) + " without enlarging it";
}

std::string bias_failure(const at::Tensor& x, const at::Tensor& bias) {
  return "bias " + sizes_text(bias) + " must broadcast with x " + sizes_text(x);
}

// Concrete sizes (every call outside symbolic tracing): compared as integers, dim by dim, with no
// shape built while the call is valid (this runs on every kernel call).
std::string concrete_shapes_failure(const at::Tensor& x, const at::Tensor& bias, const at::Tensor& scale,
                                    const at::Tensor& residual) {
  const at::IntArrayRef b = bias.defined() ? bias.sizes() : at::IntArrayRef();
  if (bias.defined() && !broadcastable(x.sizes(), b)) return bias_failure(x, bias);
  if (scale.defined() && !broadcasts_to_broadcast_of(scale.sizes(), x.sizes(), b)) {
    return enlarges_failure("scale", scale, x, bias);
  }
  if (residual.defined() && !broadcasts_to_broadcast_of(residual.sizes(), x.sizes(), b)) {
    return enlarges_failure("residual", residual, x, bias);
  }
  return "";
}

// Symbolic sizes (the Meta kernel under torch.compile(dynamic=True), torch.export): a relation the
// shape environment cannot decide becomes a guard or a runtime assert (sym_holds).
std::string symbolic_shapes_failure(const at::Tensor& x, const at::Tensor& bias, const at::Tensor& scale,
                                    const at::Tensor& residual) {
  if (bias.defined() && !broadcastable(x.sym_sizes(), bias.sym_sizes())) return bias_failure(x, bias);
  const c10::SymDimVector shape = bias.defined() ? at::infer_size_symdimvector(x.sym_sizes(), bias.sym_sizes())
                                                 : c10::SymDimVector(x.sym_sizes().begin(), x.sym_sizes().end());
  const std::pair<const char*, const at::Tensor*> operands[] = {{"scale", &scale}, {"residual", &residual}};
  for (const auto& [name, t] : operands) {
    if (t->defined() && !broadcasts_to(t->sym_sizes(), shape)) return enlarges_failure(name, *t, x, bias);
  }
  return "";
}

Predicate bias_dropout_shapes() {
  return {"bias_dropout_add_scale_shapes", [](const OpCall& call) -> std::string {
            const at::Tensor& x = call.tensor("x");
            const at::Tensor& bias = call.tensor("bias");
            const at::Tensor& scale = call.tensor("scale");
            const at::Tensor& residual = call.tensor("residual");
            const bool symbolic = has_symbolic_sizes(x) || has_symbolic_sizes(bias) || has_symbolic_sizes(scale) ||
                                  has_symbolic_sizes(residual);
            std::string failure = symbolic ? symbolic_shapes_failure(x, bias, scale, residual)
                                           : concrete_shapes_failure(x, bias, scale, residual);
            if (!failure.empty()) return failure;
            if (scale.defined() && call.scalar("scale_value", 1.0) != 1.0) {
              return "scale given both as a tensor and as scale_value";
            }
            return "";
          }};
}

// ATen's dropout refuses the same p, training or not, with the same words.
Predicate dropout_probability_valid() {
  return {"dropout_probability_valid", [](const OpCall& call) -> std::string {
            const double p = call.scalar("p", 0.0);
            if (p >= 0.0 && p <= 1.0) return "";
            return c10::str("dropout probability has to be between 0 and 1, but got ", p);
          },
          CheckError::Runtime};  // torch.dropout's TORCH_CHECK: RuntimeError
}

// A generator given for another device type is refused before any kernel runs.
Predicate generator_on_device() {
  return {"generator_on_device", [](const OpCall& call) -> std::string {
            if (!call.generator.has_value() || !call.generator->defined()) return "";
            const at::Tensor& x = call.tensor("x");
            if (!x.defined()) return "";
            const c10::DeviceType type = call.generator->device().type();
            if (type == x.device().type()) return "";
            return c10::str("Expected a '", x.device().type(), "' device type for generator but found '", type, "'");
          },
          CheckError::Runtime};  // at::check_generator's TORCH_CHECK: RuntimeError
}

// Seed 000's fused_add_dropout_scale, with the dropout mask passed in (already scaled by
// 1 / (1 - p)) so every implementation drops the same elements.
constexpr const char* kScript = R"(
def bias_dropout_add_scale(x: Tensor, bias: Optional[Tensor], scale: Tensor, residual: Optional[Tensor],
                           keep: Optional[Tensor]) -> Tensor:
    if bias is not None:
        x = x + bias
    if keep is not None:
        x = x * keep
    out = scale * x
    if residual is not None:
        out = out + residual
    return out
)";

std::vector<c10::IValue> script_arguments(const OpCall& call) {
  const at::Tensor x = call.tensor("x");
  const at::Tensor bias = call.tensor("bias");
  const at::Tensor scale = call.has_tensor("scale") ? call.tensor("scale")
                                                    : at::scalar_tensor(call.scalar("scale_value", 1.0), x.options());
  c10::IValue keep;
  if (bias_dropout_add_scale::dropout_active(call)) {
    const double p = call.scalar("p", 0.0);
    const auto shape = bias.defined() ? at::infer_size(x.sizes(), bias.sizes()) : x.sizes().vec();
    const generator_stream::Stream stream = bias_dropout_add_scale::draw_mask_stream(call);
    keep = portable_random::dropout_keep_mask(stream.seed, stream.offset, shape, p, x.device()).to(x.scalar_type()) *
           portable_random::dropout_survivor_scale(p);
  }
  auto optional = [](const at::Tensor& t) { return t.defined() ? c10::IValue(t) : c10::IValue(); };
  return {x, optional(bias), scale, optional(call.tensor("residual")), keep};
}

// x[b, t, d] with bias[d], scale[d], residual like x; training with p = 0.1.
void full(InputMaker& in, std::vector<std::int64_t> sizes) {
  const std::int64_t d = sizes.back();
  in.uniform("x", sizes);
  in.uniform("bias", {d});
  in.uniform("scale", {d}, 0.5, 1.5);
  in.uniform("residual", std::move(sizes));
  in.scalar("p", 0.1);
  in.training(true);
}

// The benchmark's inputs: x/residual[B, T, 1024], bias/scale[1024], p=0.1, training.
void bench_inputs(InputMaker& in, std::int64_t n) {
  const std::int64_t rows = n / kBenchRowWidth, b = bench_batch_for(rows);
  in.uniform("x", {b, rows / b, kBenchRowWidth});
  in.uniform("bias", {kBenchRowWidth});
  in.uniform("scale", {kBenchRowWidth}, 0.5, 1.5);
  in.uniform("residual", {b, rows / b, kBenchRowWidth});
  in.scalar("p", 0.1);
  in.training(true);
}

}  // namespace

generator_stream::Stream bias_dropout_add_scale::draw_mask_stream(const OpCall& call) {
  if (!dropout_active(call)) return {};
  const at::Tensor x = call.tensor("x");
  const at::Tensor bias = call.tensor("bias");
  const std::int64_t elements =
      bias.defined() ? c10::multiply_integers(at::infer_size_dimvector(x.sizes(), bias.sizes())) : x.numel();
  return generator_stream::draw(generator_stream::generator_for(call.generator, x.device()),
                                static_cast<std::uint64_t>(elements));
}

OpDefinition bias_dropout_add_scale_definition() {
  OpDefinition def;
  def.name = "bias_dropout_add_scale";
  def.schema = "bias_dropout_add_scale(Tensor x, Tensor? bias=None, Tensor? scale=None, Tensor? residual=None, float scale_value=1.0, float p=0.0, bool training=False, Generator? generator=None) -> Tensor";
  def.output_shape_from = {"x", "bias"};
  def.inputs = {{"x", true, true}, {"bias", false, true}, {"scale", false, true}, {"residual", false, true}};
  def.shape_sets = {
      {"basic", [](InputMaker& in) { full(in, {2, 8, 64}); }},
      {"empty", [](InputMaker& in) { full(in, {2, 0, 64}); }},
      {"size1", [](InputMaker& in) { full(in, {1, 1, 1}); }},
      {"odd_tail", [](InputMaker& in) { full(in, {3, 5, 67}); }},
      {"strided",
       [](InputMaker& in) {
         full(in, {2, 8, 64});
         in.uniform_transposed("x", {2, 8, 64}, 1, 2);
         in.uniform_transposed("residual", {2, 8, 64}, 0, 1);
       }},
      {"broadcast",
       [](InputMaker& in) {
         full(in, {3, 8, 64});
         in.uniform("scale", {3, 1, 1}, 0.5, 1.5);
         in.uniform("residual", {1, 8, 64});
       }},
      {"large", [](InputMaker& in) { full(in, {4, 256, 1024}); }},
      // Seed 000's inference variant: no dropout, scalar scale.
      {"inference",
       [](InputMaker& in) {
         in.uniform("x", {2, 8, 64});
         in.uniform("bias", {64});
         in.uniform("residual", {2, 8, 64});
         in.scalar("scale_value", 0.75);
         in.scalar("p", 0.1);
         in.training(false);
       }},
      // Optional inputs absent, heavy dropout.
      {"no_bias_no_residual",
       [](InputMaker& in) {
         in.uniform("x", {4, 67});
         in.scalar("scale_value", 1.25);
         in.scalar("p", 0.5);
         in.training(true);
       }},
  };
  def.validity = {bias_dropout_shapes(), dropout_probability_valid(), generator_on_device()};
  def.fallback = bias_dropout_add_scale::fallback;
  def.fused_cpu = bias_dropout_add_scale::fused_cpu;
  def.fused_backward_cpu = bias_dropout_add_scale::fused_backward_cpu;
#ifdef CROSSDEV_OPS_WITH_CUDA
  def.fused_cuda = bias_dropout_add_scale::fused_cuda;
  def.fused_backward_cuda = bias_dropout_add_scale::fused_backward_cuda;
#endif
  def.script = {kScript, "bias_dropout_add_scale", script_arguments};
  def.bench = {kBenchRowWidth, "x/residual[B, T, 1024], bias/scale[1024], p=0.1, training", bench_inputs};
  return def;
}

}  // namespace crossdev::ops

// The schema's C++ signature (register_op.h): x, bias, scale, residual, scale_value, p, training, generator.
CROSSDEV_REGISTER_OP(crossdev::ops::bias_dropout_add_scale_definition,
                     at::Tensor(const at::Tensor&, const std::optional<at::Tensor>&, const std::optional<at::Tensor>&,
                                const std::optional<at::Tensor>&, double, double, bool, std::optional<at::Generator>))
