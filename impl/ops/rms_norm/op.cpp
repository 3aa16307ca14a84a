#include "ops/library/register_op.h"
#include "ops/eligibility.h"
#include "ops/input_maker.h"
#include "ops/rms_norm/kernels.h"

namespace crossdev::ops {
namespace {

Predicate rms_norm_shapes() {
  return {"rms_norm_shapes", [](const OpCall& call) -> std::string {
            const at::Tensor& x = call.tensor("x");
            const at::Tensor& weight = call.tensor("weight");
            if (x.dim() == 0) return "x must have at least one dimension, got a scalar";
            if (weight.dim() != 1 || !sym_equal(weight.sym_size(0), x.sym_size(-1))) {
              return "weight must be [D] = [" + c10::str(x.sym_size(-1)) + "], got " + sizes_text(weight);
            }
            if (call.scalar("eps", 1e-6) < 0.0) return "eps must be >= 0";
            return "";
          }};
}

constexpr const char* kScript = R"(
def rms_norm(x: Tensor, weight: Tensor, eps: float) -> Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight
)";

// Rows scaled by 2^-k, k in [0, 10], so some mean squares are comparable to eps = 1e-5.
void rows_of(InputMaker& in, std::vector<std::int64_t> sizes) {
  const std::int64_t d = sizes.back();
  in.uniform("x", std::move(sizes));
  in.scale_rows_by_powers_of_two("x", 10);
  in.uniform("weight", {d}, 0.5, 1.5);
  in.scalar("eps", 1e-5);
}

// The benchmark's inputs: x[B, T, 1024], weight[1024], eps=1e-5.
void bench_inputs(InputMaker& in, std::int64_t n) {
  const std::int64_t rows = n / kBenchRowWidth, b = bench_batch_for(rows);
  in.uniform("x", {b, rows / b, kBenchRowWidth});
  in.scale_rows_by_powers_of_two("x", 10);
  in.uniform("weight", {kBenchRowWidth}, 0.5, 1.5);
  in.scalar("eps", 1e-5);
}

}  // namespace

OpDefinition rms_norm_definition() {
  OpDefinition def;
  def.name = "rms_norm";
  def.schema = "rms_norm(Tensor x, Tensor weight, float eps=1e-06) -> Tensor";
  def.inputs = {{"x", true, true}, {"weight", true, true}};
  def.shape_sets = {
      {"basic", [](InputMaker& in) { rows_of(in, {2, 8, 64}); }},
      {"empty", [](InputMaker& in) { rows_of(in, {2, 0, 64}); }},
      {"size1", [](InputMaker& in) { rows_of(in, {1, 1, 1}); }},
      {"odd_tail", [](InputMaker& in) { rows_of(in, {3, 5, 67}); }},
      {"strided",
       [](InputMaker& in) {
         rows_of(in, {2, 8, 64});
         in.uniform_transposed("x", {2, 8, 64}, 1, 2);
         in.scale_rows_by_powers_of_two("x", 10);
       }},
      {"broadcast",
       [](InputMaker& in) {
         rows_of(in, {3, 8, 64});
         in.uniform_expanded("x", {1, 8, 64}, {3, 8, 64});
       }},
      {"large", [](InputMaker& in) { rows_of(in, {4, 256, 1024}); }},
      // Long rows: where accumulating in float16/bfloat16 visibly loses precision.
      {"long_rows", [](InputMaker& in) { rows_of(in, {4, 8192}); }},
  };
  def.validity = {rms_norm_shapes()};
  def.fallback = rms_norm::fallback;
  def.fused_cpu = rms_norm::fused_cpu;
  def.fused_backward_cpu = rms_norm::fused_backward_cpu;
#ifdef CROSSDEV_OPS_WITH_CUDA
  def.fused_cuda = rms_norm::fused_cuda;
  def.fused_backward_cuda = rms_norm::fused_backward_cuda;
#endif
  def.script = {kScript, "rms_norm", [](const OpCall& call) -> std::vector<c10::IValue> {
                  return {call.tensor("x"), call.tensor("weight"), call.scalar("eps", 1e-6)};
                }};
  def.bench = {kBenchRowWidth, "x[B, T, 1024], weight[1024], eps=1e-5", bench_inputs};
  return def;
}

}  // namespace crossdev::ops

CROSSDEV_REGISTER_OP(crossdev::ops::rms_norm_definition, at::Tensor(const at::Tensor&, const at::Tensor&, double))
