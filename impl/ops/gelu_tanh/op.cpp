#include "ops/library/register_op.h"
#include "ops/gelu_tanh/kernels.h"
#include "ops/input_maker.h"

namespace crossdev::ops {
namespace {

constexpr const char* kScript = R"(
def gelu_tanh(x: Tensor) -> Tensor:
    return 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))
)";

// Wide enough to cover the curved part of the function and both saturated ends.
void values(InputMaker& in, std::vector<std::int64_t> sizes) { in.uniform("x", std::move(sizes), -4.0, 4.0); }

// The benchmark's inputs: x[N/1024, 1024].
void bench_inputs(InputMaker& in, std::int64_t n) { in.uniform("x", {n / kBenchRowWidth, kBenchRowWidth}, -4.0, 4.0); }

}  // namespace

OpDefinition gelu_tanh_definition() {
  OpDefinition def;
  def.name = "gelu_tanh";
  def.schema = "gelu_tanh(Tensor x) -> Tensor";
  def.inputs = {{"x", true, true}};
  def.shape_sets = {
      {"basic", [](InputMaker& in) { values(in, {4, 8, 64}); }},
      {"empty", [](InputMaker& in) { values(in, {0, 64}); }},
      {"size1", [](InputMaker& in) { values(in, {1}); }},
      {"odd_tail", [](InputMaker& in) { values(in, {3, 67}); }},
      {"strided", [](InputMaker& in) { in.uniform_transposed("x", {16, 67}, 0, 1, -4.0, 4.0); }},
      {"broadcast", [](InputMaker& in) { in.uniform_expanded("x", {1, 67}, {8, 67}, -4.0, 4.0); }},
      {"large", [](InputMaker& in) { values(in, {1024, 1024}); }},
  };
  def.fallback = gelu_tanh::fallback;
  def.fused_cpu = gelu_tanh::fused_cpu;
  def.fused_backward_cpu = gelu_tanh::fused_backward_cpu;
#ifdef CROSSDEV_OPS_WITH_CUDA
  def.fused_cuda = gelu_tanh::fused_cuda;
  def.fused_backward_cuda = gelu_tanh::fused_backward_cuda;
#endif
  def.script = {kScript, "gelu_tanh", [](const OpCall& call) -> std::vector<c10::IValue> { return {call.tensor("x")}; }};
  def.bench = {kBenchRowWidth, "x[N/1024, 1024]", bench_inputs};
  return def;
}

}  // namespace crossdev::ops

CROSSDEV_REGISTER_OP(crossdev::ops::gelu_tanh_definition, at::Tensor(const at::Tensor&))
