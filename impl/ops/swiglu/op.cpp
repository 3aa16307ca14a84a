#include "ops/library/register_op.h"
#include "ops/eligibility.h"
#include "ops/input_maker.h"
#include "ops/swiglu/kernels.h"

namespace crossdev::ops {
namespace {

Predicate swiglu_shapes() {
  return {"swiglu_shapes", [](const OpCall& call) -> std::string {
            const at::Tensor& gate = call.tensor("gate");
            const at::Tensor& up = call.tensor("up");
            if (broadcastable(gate.sym_sizes(), up.sym_sizes())) return "";
            return "gate " + sizes_text(gate) + " and up " + sizes_text(up) + " must broadcast";
          }};
}

constexpr const char* kScript = R"(
def swiglu(gate: Tensor, up: Tensor) -> Tensor:
    return gate * torch.sigmoid(gate) * up
)";

void pair(InputMaker& in, std::vector<std::int64_t> sizes) {
  in.uniform("gate", sizes, -4.0, 4.0);
  in.uniform("up", std::move(sizes));
}

// The benchmark's inputs: gate/up[N/1024, 1024].
void bench_inputs(InputMaker& in, std::int64_t n) {
  in.uniform("gate", {n / kBenchRowWidth, kBenchRowWidth}, -4.0, 4.0);
  in.uniform("up", {n / kBenchRowWidth, kBenchRowWidth});
}

}  // namespace

OpDefinition swiglu_definition() {
  OpDefinition def;
  def.name = "swiglu";
  def.schema = "swiglu(Tensor gate, Tensor up) -> Tensor";
  def.output_shape_from = {"gate", "up"};
  def.inputs = {{"gate", true, true}, {"up", true, true}};
  def.shape_sets = {
      {"basic", [](InputMaker& in) { pair(in, {4, 8, 64}); }},
      {"empty", [](InputMaker& in) { pair(in, {0, 64}); }},
      {"size1", [](InputMaker& in) { pair(in, {1}); }},
      {"odd_tail", [](InputMaker& in) { pair(in, {3, 67}); }},
      {"strided",
       [](InputMaker& in) {
         in.uniform_transposed("gate", {16, 67}, 0, 1, -4.0, 4.0);
         in.uniform("up", {16, 67});
       }},
      {"broadcast",
       [](InputMaker& in) {
         in.uniform("gate", {8, 67}, -4.0, 4.0);
         in.uniform("up", {1, 67});
       }},
      {"large", [](InputMaker& in) { pair(in, {1024, 1024}); }},
  };
  def.validity = {swiglu_shapes()};
  def.fallback = swiglu::fallback;
  def.fused_cpu = swiglu::fused_cpu;
  def.fused_backward_cpu = swiglu::fused_backward_cpu;
#ifdef CROSSDEV_OPS_WITH_CUDA
  def.fused_cuda = swiglu::fused_cuda;
  def.fused_backward_cuda = swiglu::fused_backward_cuda;
#endif
  def.script = {kScript, "swiglu", [](const OpCall& call) -> std::vector<c10::IValue> {
                  return {call.tensor("gate"), call.tensor("up")};
                }};
  def.bench = {kBenchRowWidth, "gate/up[N/1024, 1024]", bench_inputs};
  return def;
}

}  // namespace crossdev::ops

CROSSDEV_REGISTER_OP(crossdev::ops::swiglu_definition, at::Tensor(const at::Tensor&, const at::Tensor&))
