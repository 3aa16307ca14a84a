#include "ops/library/register_op.h"
#include "ops/eligibility.h"
#include "ops/input_maker.h"
#include "ops/layer_norm_modulate/kernels.h"

namespace crossdev::ops {
namespace {

Predicate layer_norm_modulate_shapes() {
  return {"layer_norm_modulate_shapes", [](const OpCall& call) -> std::string {
            const at::Tensor& x = call.tensor("x");
            if (x.dim() != 3) return "x must be [B, T, D], got " + sizes_text(x);
            for (const char* name : {"shift", "scale"}) {
              const at::Tensor& rows = call.tensor(name);
              if (rows.dim() != 2 || !sym_equal(rows.sym_size(1), x.sym_size(2)) ||
                  !sym_one_or_equal(rows.sym_size(0), x.sym_size(0))) {
                return std::string(name) + " must be [B or 1, D] = [" + c10::str(x.sym_size(0)) + " or 1, " +
                       c10::str(x.sym_size(2)) + "], got " + sizes_text(rows);
              }
            }
            if (call.scalar("eps", 1e-6) < 0.0) return "eps must be >= 0";
            return "";
          }};
}

constexpr const char* kScript = R"(
def layer_norm_modulate(x: Tensor, shift: Tensor, scale: Tensor, eps: float) -> Tensor:
    normed = torch.layer_norm(x, [x.size(-1)], None, None, eps)
    return normed * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)
)";

void adaln(InputMaker& in, std::int64_t b, std::int64_t t, std::int64_t d, std::int64_t rows) {
  in.uniform("x", {b, t, d}, -2.0, 2.0);
  in.uniform("shift", {rows, d});
  in.uniform("scale", {rows, d}, -0.5, 0.5);
  in.scalar("eps", 1e-5);
}

// The benchmark's inputs: x[B, T, 1024], shift/scale[B, 1024], eps=1e-5.
void bench_inputs(InputMaker& in, std::int64_t n) {
  const std::int64_t rows = n / kBenchRowWidth, b = bench_batch_for(rows);
  in.uniform("x", {b, rows / b, kBenchRowWidth}, -2.0, 2.0);
  in.uniform("shift", {b, kBenchRowWidth});
  in.uniform("scale", {b, kBenchRowWidth}, -0.5, 0.5);
  in.scalar("eps", 1e-5);
}

}  // namespace

OpDefinition layer_norm_modulate_definition() {
  OpDefinition def;
  def.name = "layer_norm_modulate";
  def.schema = "layer_norm_modulate(Tensor x, Tensor shift, Tensor scale, float eps=1e-06) -> Tensor";
  def.inputs = {{"x", true, true}, {"shift", true, true}, {"scale", true, true}};
  def.shape_sets = {
      {"basic", [](InputMaker& in) { adaln(in, 2, 8, 64, 2); }},
      {"empty", [](InputMaker& in) { adaln(in, 2, 0, 64, 2); }},
      {"size1", [](InputMaker& in) { adaln(in, 1, 1, 1, 1); }},
      {"odd_tail", [](InputMaker& in) { adaln(in, 3, 5, 67, 3); }},
      {"strided",
       [](InputMaker& in) {
         adaln(in, 2, 8, 64, 2);
         in.uniform_transposed("x", {2, 8, 64}, 1, 2, -2.0, 2.0);
         in.uniform_transposed("shift", {2, 64}, 0, 1);
       }},
      {"broadcast", [](InputMaker& in) { adaln(in, 3, 8, 64, 1); }},
      {"large", [](InputMaker& in) { adaln(in, 4, 256, 1024, 4); }},
      // Short rows: where the biased and unbiased variances differ most.
      {"short_rows", [](InputMaker& in) { adaln(in, 2, 16, 8, 2); }},
  };
  def.validity = {layer_norm_modulate_shapes()};
  def.fallback = layer_norm_modulate::fallback;
  def.fused_cpu = layer_norm_modulate::fused_cpu;
  def.fused_backward_cpu = layer_norm_modulate::fused_backward_cpu;
#ifdef CROSSDEV_OPS_WITH_CUDA
  def.fused_cuda = layer_norm_modulate::fused_cuda;
  def.fused_backward_cuda = layer_norm_modulate::fused_backward_cuda;
#endif
  def.script = {kScript, "layer_norm_modulate", [](const OpCall& call) -> std::vector<c10::IValue> {
                  return {call.tensor("x"), call.tensor("shift"), call.tensor("scale"), call.scalar("eps", 1e-6)};
                }};
  def.bench = {kBenchRowWidth, "x[B, T, 1024], shift/scale[B, 1024], eps=1e-5", bench_inputs};
  return def;
}

}  // namespace crossdev::ops

CROSSDEV_REGISTER_OP(crossdev::ops::layer_norm_modulate_definition,
                     at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, double))
