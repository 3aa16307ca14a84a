#include "ops/library/register_op.h"
#include "ops/eligibility.h"
#include "ops/input_maker.h"
#include "ops/scaled_masked_softmax/kernels.h"

namespace crossdev::ops {
namespace {

Predicate softmax_shapes() {
  return {"scaled_masked_softmax_shapes", [](const OpCall& call) -> std::string {
            const at::Tensor& scores = call.tensor("scores");
            const at::Tensor& mask = call.tensor("mask");
            if (scores.dim() == 0) return "scores must have at least one dimension (keys last), got a scalar";
            if (mask.defined() && !broadcasts_to(mask.sym_sizes(), scores.sym_sizes())) {
              return "mask " + sizes_text(mask) + " must broadcast to scores " + sizes_text(scores);
            }
            return "";
          }};
}

constexpr const char* kScript = R"(
def scaled_masked_softmax(scores: Tensor, mask: Optional[Tensor], scale: float) -> Tensor:
    logits = scores * scale
    if mask is None:
        return torch.softmax(logits, -1)
    logits = logits.masked_fill(mask, float("-inf"))
    return torch.softmax(logits, -1).masked_fill(mask, 0.0)
)";

// scores[b, h, q, k] in [-4, 4); a per-batch mask [b, 1, q, k] with 30% of keys masked and the
// first query row of batch 0 fully masked (the all-zero convention).
void attention(InputMaker& in, std::int64_t b, std::int64_t h, std::int64_t q, std::int64_t k) {
  in.uniform("scores", {b, h, q, k}, -4.0, 4.0);
  at::Tensor& mask = in.mask("mask", {b, 1, q, k}, 0.3);
  if (mask.numel() > 0) mask[0][0][0].fill_(true);
  in.scalar("scale", 0.35);
}

// The benchmark's inputs: scores[B, H=8, Q=128, K=256], mask[B, 1, Q, K] with 30% masked.
void bench_inputs(InputMaker& in, std::int64_t n) {
  const std::int64_t b = n / (8 * 128 * 256);
  in.uniform("scores", {b, 8, 128, 256}, -4.0, 4.0);
  in.mask("mask", {b, 1, 128, 256}, 0.3);
  in.scalar("scale", 0.35);
}

}  // namespace

OpDefinition scaled_masked_softmax_definition() {
  OpDefinition def;
  def.name = "scaled_masked_softmax";
  def.schema = "scaled_masked_softmax(Tensor scores, Tensor? mask=None, float scale=1.0) -> Tensor";
  def.inputs = {{"scores", true, true}, {"mask", false, false, InputKind::Mask}};
  def.shape_sets = {
      {"basic", [](InputMaker& in) { attention(in, 2, 4, 8, 16); }},
      {"empty", [](InputMaker& in) { attention(in, 2, 4, 0, 16); }},
      {"size1",
       [](InputMaker& in) {
         in.uniform("scores", {1, 1, 1, 1}, -4.0, 4.0);
         in.scalar("scale", 0.35);
       }},
      {"odd_tail", [](InputMaker& in) { attention(in, 3, 2, 5, 67); }},
      {"strided",
       [](InputMaker& in) {
         attention(in, 2, 4, 8, 16);
         in.uniform_transposed("scores", {2, 4, 8, 16}, 2, 3, -4.0, 4.0);
       }},
      {"broadcast",
       [](InputMaker& in) {
         attention(in, 2, 4, 8, 16);
         in.mask("mask", {8, 16}, 0.3);
       }},
      {"large", [](InputMaker& in) { attention(in, 4, 8, 128, 256); }},
      {"no_mask",
       [](InputMaker& in) {
         in.uniform("scores", {2, 4, 8, 67}, -4.0, 4.0);
         in.scalar("scale", 0.35);
       }},
  };
  def.validity = {softmax_shapes()};
  def.fallback = scaled_masked_softmax::fallback;
  def.fused_cpu = scaled_masked_softmax::fused_cpu;
  def.fused_backward_cpu = scaled_masked_softmax::fused_backward_cpu;
#ifdef CROSSDEV_OPS_WITH_CUDA
  def.fused_cuda = scaled_masked_softmax::fused_cuda;
  def.fused_backward_cuda = scaled_masked_softmax::fused_backward_cuda;
#endif
  def.script = {kScript, "scaled_masked_softmax", [](const OpCall& call) -> std::vector<c10::IValue> {
                  const at::Tensor mask = call.tensor("mask");
                  return {call.tensor("scores"), mask.defined() ? c10::IValue(mask) : c10::IValue(),
                          call.scalar("scale", 1.0)};
                }};
  def.bench = {8 * 128 * 256, "scores[B, 8, 128, 256], mask[B, 1, 128, 256], scale=0.35", bench_inputs};
  return def;
}

}  // namespace crossdev::ops

CROSSDEV_REGISTER_OP(crossdev::ops::scaled_masked_softmax_definition,
                     at::Tensor(const at::Tensor&, const std::optional<at::Tensor>&, double))
