#include "ops/library/register_op.h"
#include "ops/eligibility.h"
#include "ops/input_maker.h"
#include "ops/rotary/kernels.h"

namespace crossdev::ops {
namespace {

Predicate rotary_shapes() {
  return {"rotary_shapes", [](const OpCall& call) -> std::string {
            const at::Tensor& x = call.tensor("x");
            if (x.dim() != 4) return "x must be [B, T, H, Dh], got " + sizes_text(x);
            if (!sym_equal(x.sym_size(3) % 2, 0)) return "Dh must be even for the half rotation, got " + c10::str(x.sym_size(3));
            for (const char* name : {"cos", "sin"}) {
              const at::Tensor& table = call.tensor(name);
              if (table.dim() != 2 || !sym_equal(table.sym_size(1), x.sym_size(3)) ||
                  !sym_one_or_equal(table.sym_size(0), x.sym_size(1))) {
                return std::string(name) + " must be [T or 1, Dh] = [" + c10::str(x.sym_size(1)) + " or 1, " +
                       c10::str(x.sym_size(3)) + "], got " + sizes_text(table);
              }
            }
            return "";
          }};
}

constexpr const char* kScript = R"(
def rotate_half(x: Tensor) -> Tensor:
    half = x.size(-1) // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)

def rotary(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    return x * cos.unsqueeze(1) + rotate_half(x) * sin.unsqueeze(1)
)";

// cos/sin hold arbitrary values in [-1, 1): the op is defined for any table, and independent
// values expose a swapped half or sign that true cos/sin pairs might hide.
void rope(InputMaker& in, std::int64_t b, std::int64_t t, std::int64_t h, std::int64_t dh, std::int64_t table_rows) {
  in.uniform("x", {b, t, h, dh});
  in.uniform("cos", {table_rows, dh});
  in.uniform("sin", {table_rows, dh});
}

// The benchmark's inputs: x[B, T, H=8, Dh=128], tables [T, Dh].
void bench_inputs(InputMaker& in, std::int64_t n) {
  const std::int64_t rows = n / kBenchRowWidth, b = bench_batch_for(rows), t = rows / b;
  in.uniform("x", {b, t, 8, 128});
  in.uniform("cos", {t, 128});
  in.uniform("sin", {t, 128});
}

}  // namespace

OpDefinition rotary_definition() {
  OpDefinition def;
  def.name = "rotary";
  def.schema = "rotary(Tensor x, Tensor cos, Tensor sin) -> Tensor";
  def.inputs = {{"x", true, true}, {"cos", true, true}, {"sin", true, true}};
  def.shape_sets = {
      {"basic", [](InputMaker& in) { rope(in, 2, 8, 4, 32, 8); }},
      {"empty", [](InputMaker& in) { rope(in, 2, 0, 4, 32, 0); }},
      {"size1", [](InputMaker& in) { rope(in, 1, 1, 1, 2, 1); }},
      {"odd_tail", [](InputMaker& in) { rope(in, 3, 5, 3, 38, 5); }},
      {"strided",
       [](InputMaker& in) {
         rope(in, 2, 8, 4, 32, 8);
         in.uniform_transposed("x", {2, 8, 4, 32}, 1, 2);
       }},
      {"broadcast", [](InputMaker& in) { rope(in, 2, 8, 4, 32, 1); }},
      {"large", [](InputMaker& in) { rope(in, 4, 256, 8, 128, 256); }},
  };
  def.validity = {rotary_shapes()};
  def.fallback = rotary::fallback;
  def.fused_cpu = rotary::fused_cpu;
  def.fused_backward_cpu = rotary::fused_backward_cpu;
#ifdef CROSSDEV_OPS_WITH_CUDA
  def.fused_cuda = rotary::fused_cuda;
  def.fused_backward_cuda = rotary::fused_backward_cuda;
#endif
  def.script = {kScript, "rotary", [](const OpCall& call) -> std::vector<c10::IValue> {
                  return {call.tensor("x"), call.tensor("cos"), call.tensor("sin")};
                }};
  def.bench = {kBenchRowWidth, "x[B, T, 8, 128], cos/sin[T, 128]", bench_inputs};
  return def;
}

}  // namespace crossdev::ops

CROSSDEV_REGISTER_OP(crossdev::ops::rotary_definition, at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&))
