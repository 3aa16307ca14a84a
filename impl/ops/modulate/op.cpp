#include "ops/library/register_op.h"
#include "ops/eligibility.h"
#include "ops/input_maker.h"
#include "ops/modulate/kernels.h"

namespace crossdev::ops {
namespace {

// [B|1, D] rows matching x[B, T, D].
std::string check_rows(const char* name, const at::Tensor& rows, const at::Tensor& x) {
  if (rows.dim() == 2 && sym_equal(rows.sym_size(1), x.sym_size(2)) && sym_one_or_equal(rows.sym_size(0), x.sym_size(0))) {
    return "";
  }
  return std::string(name) + " must be [B or 1, D] = [" + c10::str(x.sym_size(0)) + " or 1, " + c10::str(x.sym_size(2)) +
         "], got " + sizes_text(rows);
}

Predicate modulate_shapes() {
  return {"modulate_shapes", [](const OpCall& call) -> std::string {
            const at::Tensor& x = call.tensor("x");
            if (x.dim() != 3) return "x must be [B, T, D], got " + sizes_text(x);
            std::string why = check_rows("shift", call.tensor("shift"), x);
            return why.empty() ? check_rows("scale", call.tensor("scale"), x) : why;
          }};
}

void rows_input(InputMaker& in, std::int64_t b, std::int64_t t, std::int64_t d, std::int64_t rows) {
  in.uniform("x", {b, t, d});
  in.uniform("shift", {rows, d});
  in.uniform("scale", {rows, d}, -0.5, 0.5);
}

constexpr const char* kScript = R"(
def modulate(x: Tensor, shift: Tensor, scale: Tensor) -> Tensor:
    return x * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)
)";

// The benchmark's inputs: x[B, T, 1024], shift/scale[B, 1024].
void bench_inputs(InputMaker& in, std::int64_t n) {
  const std::int64_t rows = n / kBenchRowWidth, b = bench_batch_for(rows);
  in.uniform("x", {b, rows / b, kBenchRowWidth});
  in.uniform("shift", {b, kBenchRowWidth});
  in.uniform("scale", {b, kBenchRowWidth}, -0.5, 0.5);
}

}  // namespace

OpDefinition modulate_definition() {
  OpDefinition def;
  def.name = "modulate";
  def.schema = "modulate(Tensor x, Tensor shift, Tensor scale) -> Tensor";
  def.inputs = {{"x", true, true}, {"shift", true, true}, {"scale", true, true}};
  def.shape_sets = {
      {"basic", [](InputMaker& in) { rows_input(in, 2, 8, 64, 2); }},
      {"empty", [](InputMaker& in) { rows_input(in, 2, 0, 64, 2); }},
      {"size1", [](InputMaker& in) { rows_input(in, 1, 1, 1, 1); }},
      {"odd_tail", [](InputMaker& in) { rows_input(in, 3, 5, 67, 3); }},
      {"strided",
       [](InputMaker& in) {
         in.uniform_transposed("x", {2, 8, 64}, 1, 2);
         in.uniform_transposed("shift", {2, 64}, 0, 1);
         in.uniform_transposed("scale", {2, 64}, 0, 1, -0.5, 0.5);
       }},
      {"broadcast", [](InputMaker& in) { rows_input(in, 3, 8, 64, 1); }},
      {"large", [](InputMaker& in) { rows_input(in, 4, 256, 1024, 4); }},
  };
  def.validity = {modulate_shapes()};
  def.fallback = modulate::fallback;
  def.fused_cpu = modulate::fused_cpu;
  def.fused_backward_cpu = modulate::fused_backward_cpu;
#ifdef CROSSDEV_OPS_WITH_CUDA
  def.fused_cuda = modulate::fused_cuda;
  def.fused_backward_cuda = modulate::fused_backward_cuda;
#endif
  def.script = {kScript, "modulate", [](const OpCall& call) -> std::vector<c10::IValue> {
                  return {call.tensor("x"), call.tensor("shift"), call.tensor("scale")};
                }};
  def.bench = {kBenchRowWidth, "x[B, T, 1024], shift/scale[B, 1024]", bench_inputs};
  return def;
}

}  // namespace crossdev::ops

CROSSDEV_REGISTER_OP(crossdev::ops::modulate_definition, at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&))
