// Each mutant is a plausible bug of a fused kernel, built from the production kernel with one
// thing wrong (or, where the bug lives inside the loop, a small composition with that bug).
#include "mutant_kernels.h"

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/OpMathType.h>

#include "ops/bias_dropout_add_scale/kernels.h"
#include "ops/gelu_tanh/kernels.h"
#include "ops/layer_norm_modulate/kernels.h"
#include "ops/modulate/kernels.h"
#include "ops/portable_random.h"
#include "ops/rms_norm/kernels.h"
#include "ops/rotary/kernels.h"
#include "ops/scaled_masked_softmax/kernels.h"
#include "ops/swiglu/kernels.h"

namespace crossdev::mutants {
namespace {

using ops::OpCall;

at::Tensor opmath(const at::Tensor& t) { return t.to(at::toOpMathType(t.scalar_type())); }

OpCall with(OpCall call, const char* name, at::Tensor value) {
  call.tensors[name] = std::move(value);
  return call;
}

// Row t of shift/scale comes from batch t % B: varies along T, broadcast along B.
at::Tensor modulate_wrong_broadcast_axis(const OpCall& call) {
  const at::Tensor x = call.tensor("x");
  const auto rows = [&](const char* name) {
    const at::Tensor r = opmath(call.tensor(name));
    const at::Tensor index = at::arange(x.size(1), r.options().dtype(at::kLong)).remainder(r.size(0));
    return r.index_select(0, index).unsqueeze(0);
  };
  return (opmath(x) * (1 + rows("scale")) + rows("shift")).to(x.scalar_type());
}

// scale * (dropout(x + bias) + residual)
at::Tensor bdas_scale_on_residual(const OpCall& call) {
  const at::Tensor residual = call.tensor("residual");
  const at::Tensor kept = ops::bias_dropout_add_scale::fused_cpu(with(call, "residual", at::Tensor()));
  if (!residual.defined()) return kept;
  const at::Tensor scale = call.has_tensor("scale") ? opmath(call.tensor("scale"))
                                                    : at::scalar_tensor(call.scalar("scale_value", 1.0), at::kDouble);
  return (opmath(kept) + opmath(residual) * scale).to(kept.scalar_type());
}

// Kept elements are not multiplied by 1 / (1 - p).
at::Tensor bdas_mask_not_rescaled(const OpCall& call) {
  const at::Tensor x = call.tensor("x");
  at::Tensor v = opmath(x);
  if (call.has_tensor("bias")) v = v + opmath(call.tensor("bias"));
  if (ops::bias_dropout_add_scale::dropout_active(call)) {
    const ops::generator_stream::Stream stream = ops::bias_dropout_add_scale::draw_mask_stream(call);
    v = v * ops::portable_random::dropout_keep_mask(stream.seed, stream.offset, v.sizes(), call.scalar("p", 0.0), v.device())
                .to(v.scalar_type());
  }
  at::Tensor out = call.has_tensor("scale") ? v * opmath(call.tensor("scale")) : v * call.scalar("scale_value", 1.0);
  if (call.has_tensor("residual")) out = out + opmath(call.tensor("residual"));
  return out.to(x.scalar_type());
}

at::Tensor rms_norm_eps_x10(const OpCall& call) {
  OpCall c = call;
  c.scalars["eps"] = call.scalar("eps", 1e-6) * 10.0;
  return ops::rms_norm::fused_cpu(c);
}

// The running sum of squares is rounded to the storage dtype at every step.
at::Tensor rms_norm_fp16_accum(const OpCall& call) {
  const at::Tensor x = call.tensor("x");
  const std::int64_t d = x.dim() == 0 ? 1 : x.size(-1);
  const at::Tensor rows = x.reshape({-1, d});
  at::Tensor sum = at::zeros({rows.size(0)}, x.options());
  for (std::int64_t i = 0; i < d; ++i) {
    const at::Tensor col = rows.select(1, i);
    sum = (opmath(sum) + opmath(col) * opmath(col)).to(x.scalar_type());
  }
  const at::Tensor inv_rms = (opmath(sum) / static_cast<double>(d) + call.scalar("eps", 1e-6)).rsqrt();
  return (opmath(rows) * inv_rms.unsqueeze(1)).reshape(x.sizes()).mul(opmath(call.tensor("weight"))).to(x.scalar_type());
}

// Divides the sum of squared deviations by D - 1.
at::Tensor lnm_unbiased_variance(const OpCall& call) {
  const at::Tensor x = opmath(call.tensor("x"));
  const at::Tensor mean = x.mean(-1, true);
  const at::Tensor var = at::var(x, {-1}, /*unbiased=*/true, /*keepdim=*/true);
  const at::Tensor normed = (x - mean) * (var + call.scalar("eps", 1e-6)).rsqrt();
  return (normed * (1 + opmath(call.tensor("scale")).unsqueeze(1)) + opmath(call.tensor("shift")).unsqueeze(1))
      .to(call.tensor("x").scalar_type());
}

at::Tensor lnm_shift_scale_swapped(const OpCall& call) {
  OpCall c = call;
  std::swap(c.tensors["shift"], c.tensors["scale"]);
  return ops::layer_norm_modulate::fused_cpu(c);
}

// The scalar tail after the last full 8-wide vector is never written (left zero here).
at::Tensor gelu_drop_vec_tail(const OpCall& call) {
  at::Tensor out = ops::gelu_tanh::fused_cpu(call);
  const std::int64_t n = out.numel();
  if (n % 8 != 0) out.view({-1}).narrow(0, n - n % 8, n % 8).zero_();
  return out;
}

// sqrt(2 / pi) truncated to 0.79.
at::Tensor gelu_truncated_beta(const OpCall& call) {
  const at::Tensor x = call.tensor("x");
  const at::Tensor v = opmath(x);
  return (0.5 * v * (1 + at::tanh(0.79 * (v + ops::gelu_tanh::kKappa * v * v * v)))).to(x.scalar_type());
}

at::Tensor swiglu_silu_on_up(const OpCall& call) {
  OpCall c = call;
  std::swap(c.tensors["gate"], c.tensors["up"]);
  return ops::swiglu::fused_cpu(c);
}

// Reads a dense non-contiguous x as if it were contiguous.
at::Tensor rotary_ignore_stride(const OpCall& call) {
  const at::Tensor x = call.tensor("x");
  if (x.is_contiguous() || !x.is_non_overlapping_and_dense()) return ops::rotary::fused_cpu(call);
  const at::Tensor as_if_contiguous = x.as_strided(x.sizes(), c10::contiguous_strides(x.sizes()), x.storage_offset());
  return ops::rotary::fused_cpu(with(call, "x", as_if_contiguous));
}

at::Tensor rotary_sin_sign_flipped(const OpCall& call) {
  return ops::rotary::fused_cpu(with(call, "sin", call.tensor("sin").neg()));
}

// Applies batch 0's mask to every batch.
at::Tensor softmax_mask_wrong_batch(const OpCall& call) {
  const at::Tensor mask = call.tensor("mask");
  const at::Tensor scores = call.tensor("scores");
  if (!mask.defined() || mask.dim() != scores.dim() || mask.size(0) < 2) return ops::scaled_masked_softmax::fused_cpu(call);
  return ops::scaled_masked_softmax::fused_cpu(with(call, "mask", mask.narrow(0, 0, 1).expand(mask.sizes())));
}

// Backward: d silu / d gate taken as sigmoid(gate) (the (1 + gate (1 - sigmoid)) factor dropped).
std::vector<at::Tensor> swiglu_backward_silu_grad_as_sigmoid(const OpCall& call, const at::Tensor& grad_out) {
  const at::Tensor gate = opmath(call.tensor("gate"));
  const at::Tensor up = opmath(call.tensor("up"));
  const at::Tensor g = opmath(grad_out);
  const at::Tensor s = gate.sigmoid();
  const at::ScalarType dtype = call.tensor("gate").scalar_type();
  return {(g * up * s).sum_to_size(gate.sizes()).to(dtype), (g * gate * s).sum_to_size(up.sizes()).to(dtype)};
}

// Backward: grad_x = r g w, the derivative of r = rsqrt(mean(x^2) + eps) itself left out.
std::vector<at::Tensor> rms_norm_backward_no_rsqrt_term(const OpCall& call, const at::Tensor& grad_out) {
  const at::Tensor x = opmath(call.tensor("x"));
  const at::Tensor w = opmath(call.tensor("weight"));
  const at::Tensor g = opmath(grad_out);
  const at::Tensor r = (x * x).mean(-1, true).add(call.scalar("eps", 1e-6)).rsqrt();
  const at::ScalarType dtype = call.tensor("x").scalar_type();
  return {(g * w * r).to(dtype), (g * x * r).reshape({-1, x.size(-1)}).sum(0).to(dtype)};
}

}  // namespace

const std::vector<MutantRow>& mutant_rows() {
  static const std::vector<MutantRow> rows = {
      {"modulate.wrong_broadcast_axis", "shift/scale rows indexed by time step t % B instead of batch b (B >= 2 exposes it)",
       modulate_wrong_broadcast_axis},
      {"bias_dropout_add_scale.scale_on_residual",
       "computes scale * (dropout(x + bias) + residual) (a residual with scale != 1 exposes it)", bdas_scale_on_residual},
      {"bias_dropout_add_scale.mask_not_rescaled",
       "kept elements are not multiplied by 1 / (1 - p) (training with p > 0 exposes it)", bdas_mask_not_rescaled},
      {"rms_norm.eps_x10", "uses 10 * eps (rows whose mean square is near eps expose it)", rms_norm_eps_x10},
      {"rms_norm.fp16_accum", "accumulates the sum of squares in the storage dtype (float16/bfloat16 with long rows)",
       rms_norm_fp16_accum},
      {"layer_norm_modulate.unbiased_variance", "divides the sum of squared deviations by D - 1 (short rows expose it)",
       lnm_unbiased_variance},
      {"layer_norm_modulate.shift_scale_swapped", "uses shift as the scale and scale as the shift", lnm_shift_scale_swapped},
      {"gelu_tanh.drop_vec_tail", "skips the scalar tail after the last full vector (sizes not a multiple of the width)",
       gelu_drop_vec_tail},
      {"gelu_tanh.truncated_beta", "uses 0.79 for sqrt(2 / pi)", gelu_truncated_beta},
      {"swiglu.silu_on_up", "computes gate * silu(up)", swiglu_silu_on_up},
      {"rotary.ignore_stride", "reads x as if it were contiguous (non-contiguous x exposes it)", rotary_ignore_stride},
      {"rotary.sin_sign_flipped", "rotates the wrong way: x * cos - rotate_half(x) * sin", rotary_sin_sign_flipped},
      {"scaled_masked_softmax.mask_wrong_batch",
       "applies batch 0's mask to every batch (per-batch masks with B >= 2 expose it)", softmax_mask_wrong_batch},
      {"swiglu.backward_silu_grad_as_sigmoid",
       "backward: takes d silu(gate) / d gate as sigmoid(gate), dropping the (1 + gate (1 - sigmoid)) factor", nullptr,
       swiglu_backward_silu_grad_as_sigmoid},
      {"rms_norm.backward_no_rsqrt_term",
       "backward: grad_x = rsqrt(mean(x^2) + eps) * grad * weight, leaving out the normalization's own derivative",
       nullptr, rms_norm_backward_no_rsqrt_term},
  };
  return rows;
}

}  // namespace crossdev::mutants
