// One pass over the output each way (forward: by rows from the pointers in the usual contiguous
// layout, run_rows; else a TensorIterator). The dropout mask is never materialized: element i (its
// row-major index in the contiguous output) is kept iff uniform01(dropout_key(seed), offset + i)
// >= p, for the call's stream (seed, offset) (draw_mask_stream, kernels.h),
// the same rule dropout_keep_mask() applies for the fallback, decided 64 elements at a time in
// SIMD on the contiguous path (ops/cpu/lane_bits.h) and one at a time on the strided one.
//   forward   out = s keep (x + bias) + residual
//   backward  gv = g s keep / (1 - p) (grad of x + bias) and, with a scale tensor,
//             gs = g keep (x + bias) / (1 - p),
//             in one pass, in opmath; grad_x / grad_bias = gv and grad_scale = gs summed to their
//             shapes (at::sum_to_size, rounded once), grad_residual = g summed to its shape.
// Compiled once per instruction set (CPU_CAPABILITY, ops/cpu/dispatch.h).
#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>
#include <ATen/Functions.h>
#include <ATen/TensorIterator.h>

#include "ops/bias_dropout_add_scale/kernels.h"
#include "ops/cpu/dispatch.h"
#include "ops/cpu/lane_bits.h"
#include "ops/cpu/rows.h"
#include "ops/cpu/vec_io.h"
#include "ops/eligibility.h"
#include "ops/output.h"
#include "ops/portable_random.h"

namespace crossdev::ops::bias_dropout_add_scale::CPU_CAPABILITY {
namespace {

struct Plan {
  int bias = -1, scale = -1, residual = -1;  // operand indices; -1 = absent
  bool dropout = false;
  double p = 0.0;
  double survivor = 1.0;
  double scalar_scale = 1.0;
  std::uint64_t key = 0;
  std::uint64_t offset = 0;     // the stream's first counter: element i uses offset + i
  std::uint64_t threshold = 0;  // portable_random::dropout_threshold(p)
};

// The dropout parameters of a call, which the forward and the backward plans both carry.
template <typename AnyPlan>
void set_dropout(AnyPlan& plan, const OpCall& call) {
  plan.dropout = dropout_active(call);
  plan.p = call.scalar("p", 0.0);
  plan.survivor = portable_random::dropout_survivor_scale(plan.p);
  plan.scalar_scale = call.scalar("scale_value", 1.0);
  const generator_stream::Stream stream = draw_mask_stream(call);
  plan.key = portable_random::dropout_key(stream.seed);
  plan.offset = stream.offset;
  plan.threshold = portable_random::dropout_threshold(plan.p);
}

template <typename scalar_t>
void run(at::TensorIteratorBase& iter, const Plan& plan, const char* out_base) {
  CROSSDEV_VEC_IO_TYPES(scalar_t);
  const int operands = iter.ntensors();
  const opmath_t survivor(plan.survivor), scalar_scale(plan.scalar_scale);

  auto keep_factor = [&](std::int64_t index) -> opmath_t {
    return portable_random::dropout_keep(plan.key, plan.offset + static_cast<std::uint64_t>(index), plan.threshold) ? survivor : opmath_t(0);
  };
  auto load_at = [](char* base, std::int64_t stride, std::int64_t i) {
    return static_cast<opmath_t>(*reinterpret_cast<const scalar_t*>(base + i * stride));
  };

  iter.for_each([&](char** data, const std::int64_t* strides, std::int64_t n) {
    bool contiguous = true;
    for (int k = 0; k < operands; ++k) contiguous = contiguous && strides[k] == sizeof(scalar_t);
    std::int64_t i = 0;
    if (contiguous) {
      const std::int64_t first = (data[0] - out_base) / static_cast<std::int64_t>(sizeof(scalar_t));
      auto ptr = [&](int k) { return reinterpret_cast<const scalar_t*>(data[k]); };
      cpu::KeepLanes<opmath_t> keep(plan.key, plan.threshold, plan.offset + static_cast<std::uint64_t>(first), survivor);
      for (; i + IO::kWidth <= n; i += IO::kWidth) {
        Vec v = IO::load(ptr(1) + i);
        if (plan.bias >= 0) v = v + IO::load(ptr(plan.bias) + i);
        if (plan.dropout) v = v * keep.next();
        const Vec s = plan.scale >= 0 ? IO::load(ptr(plan.scale) + i) : Vec(scalar_scale);
        Vec out;
        if (plan.residual < 0) {
          out = v * s;
        } else {
          out = at::vec::fmadd(v, s, IO::load(ptr(plan.residual) + i));
        }
        IO::store(reinterpret_cast<scalar_t*>(data[0]) + i, out);
      }
    }
    for (; i < n; ++i) {
      opmath_t v = load_at(data[1], strides[1], i);
      if (plan.bias >= 0) v += load_at(data[plan.bias], strides[plan.bias], i);
      if (plan.dropout) {
        v *= keep_factor((data[0] + i * strides[0] - out_base) / static_cast<std::int64_t>(sizeof(scalar_t)));
      }
      const opmath_t s = plan.scale >= 0 ? load_at(data[plan.scale], strides[plan.scale], i) : scalar_scale;
      opmath_t out = v * s;
      if (plan.residual >= 0) {
        const opmath_t r = load_at(data[plan.residual], strides[plan.residual], i);
        out = out + r;
      }
      *reinterpret_cast<scalar_t*>(data[0] + i * strides[0]) = static_cast<scalar_t>(out);
    }
  });
}

// The row path's view of one operand: its data and whether it has a row per output row (the
// output's shape) or one row for all (shape [D] or [1, ..., 1, D]).
struct RowOperand {
  const void* data = nullptr;  // nullptr: absent
  bool per_row = false;
};

// False when `t` (defined) is neither contiguous of out's shape nor one contiguous row of out's
// dtype: the TensorIterator path takes the call.
bool as_row_operand(const at::Tensor& t, const at::Tensor& out, RowOperand& operand) {
  if (!t.defined()) return true;
  if (!t.is_contiguous() || t.scalar_type() != out.scalar_type() || t.dim() == 0) return false;
  if (t.sizes() == out.sizes()) {
    operand = {t.const_data_ptr(), true};
    return true;
  }
  if (t.size(-1) == out.size(-1) && t.numel() == out.size(-1)) {
    operand = {t.const_data_ptr(), false};
    return true;
  }
  return false;
}

// The usual layout (x, residual and out contiguous [..., D], bias and scale rows of D or of out's
// shape, D a whole number of vectors), the per-call figure's at [2, 8, 64]: rows read straight from
// the pointers, without a TensorIterator, whose set-up was most of a small call's time. The same
// arithmetic, in the same order, and the same mask counters (element i of the contiguous output
// uses offset + i) as run()'s contiguous loop.
// Dropout is a template parameter: a call without it runs a loop with no mask state, and neither
// loop tests the flag per vector.
template <typename scalar_t, bool Dropout>
void run_rows(const Plan& plan, at::Tensor& out, const RowOperand& x, const RowOperand& bias, const RowOperand& scale,
              const RowOperand& residual) {
  CROSSDEV_VEC_IO_TYPES(scalar_t);
  const std::int64_t d = out.size(-1);
  const std::int64_t rows = out.numel() / d;
  const opmath_t survivor(plan.survivor), scalar_scale(plan.scalar_scale);
  scalar_t* op = out.mutable_data_ptr<scalar_t>();
  const auto row_of = [d](const RowOperand& o, std::int64_t r) {
    return o.data == nullptr ? nullptr : static_cast<const scalar_t*>(o.data) + (o.per_row ? r * d : 0);
  };
  cpu::parallel_row_ranges(rows, d, [&, d](std::int64_t begin, std::int64_t end) {
    [[maybe_unused]] cpu::KeepLanes<opmath_t> keep(plan.key, plan.threshold,
                                                   plan.offset + static_cast<std::uint64_t>(begin * d), survivor);
    for (std::int64_t r = begin; r < end; ++r) {
      const scalar_t* xr = row_of(x, r);
      const scalar_t* br = row_of(bias, r);
      const scalar_t* sr = row_of(scale, r);
      const scalar_t* rr = row_of(residual, r);
      scalar_t* dst = op + r * d;
      for (std::int64_t i = 0; i < d; i += IO::kWidth) {
        Vec v = IO::load(xr + i);
        if (br != nullptr) v = v + IO::load(br + i);
        if constexpr (Dropout) v = v * keep.next();
        const Vec s = sr != nullptr ? IO::load(sr + i) : Vec(scalar_scale);
        IO::store(dst + i, rr != nullptr ? at::vec::fmadd(v, s, IO::load(rr + i)) : v * s);
      }
    }
  });
}

at::Tensor forward(const OpCall& call) {
  const at::Tensor& x = call.tensor("x");
  const at::Tensor& bias = call.tensor("bias");
  // The shape of x + bias: x's own where bias does not enlarge it (the usual [D] bias).
  const bool bias_fits_x = !bias.defined() || broadcasts_to(bias.sizes(), x.sizes());
  at::DimVector enlarged;
  if (!bias_fits_x) enlarged = at::infer_size_dimvector(x.sizes(), bias.sizes());
  // Contiguous, so an element's offset from the base is its row-major index: the mask counter.
  at::Tensor out = output_for(call, bias_fits_x ? x.sizes() : at::IntArrayRef(enlarged), x.options());

  RowOperand rx, rbias, rscale, rresidual;
  const bool rows = out.dim() > 0 && out.numel() > 0 && x.sizes() == out.sizes() && as_row_operand(x, out, rx) &&
                    as_row_operand(bias, out, rbias) && as_row_operand(call.tensor("scale"), out, rscale) &&
                    as_row_operand(call.tensor("residual"), out, rresidual);
  bool whole_vectors = false;
  if (rows) {
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "bias_dropout_add_scale_fused_cpu",
                                    [&] { whole_vectors = out.size(-1) % cpu::VecIO<scalar_t>::kWidth == 0; });
  }
  if (rows && whole_vectors) {
    Plan plan;  // run_rows reads the operands from the RowOperands, the rest from the plan
    set_dropout(plan, call);  // draws the stream once, as the other path does
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "bias_dropout_add_scale_fused_cpu",
                                    [&] {
                                      if (plan.dropout) {
                                        run_rows<scalar_t, true>(plan, out, rx, rbias, rscale, rresidual);
                                      } else {
                                        run_rows<scalar_t, false>(plan, out, rx, rbias, rscale, rresidual);
                                      }
                                    });
    return out;
  }

  Plan plan;
  at::TensorIteratorConfig config;
  config.add_output(out).add_const_input(x);
  int next = 2;
  const auto& given = call.tensors;
  auto add = [&](const char* name, int& slot) {
    auto it = given.find(name);
    if (it == given.end() || !it->second.defined()) return;
    config.add_const_input(it->second);
    slot = next++;
  };
  add("bias", plan.bias);
  add("scale", plan.scale);
  add("residual", plan.residual);
  auto iter = config.build();

  set_dropout(plan, call);

  const char* base = static_cast<const char*>(out.const_data_ptr());
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "bias_dropout_add_scale_fused_cpu",
                                  [&] { run<scalar_t>(iter, plan, base); });
  return out;
}

// Operands: 0 gv, 1 gs (when `gs`), then grad, x, bias?, scale?.
struct BackwardPlan {
  bool gs = false;
  int grad = -1, x = -1, bias = -1, scale = -1;
  bool dropout = false;
  double p = 0.0, survivor = 1.0, scalar_scale = 1.0;
  std::uint64_t key = 0, offset = 0, threshold = 0;
};

template <typename scalar_t>
void run_backward(at::TensorIteratorBase& iter, const BackwardPlan& plan, const char* gv_base) {
  CROSSDEV_VEC_IO_TYPES(scalar_t);
  using OutIO = cpu::VecIO<opmath_t>;
  const int outputs = plan.gs ? 2 : 1;
  const int operands = iter.ntensors();
  const opmath_t survivor(plan.survivor), scalar_scale(plan.scalar_scale);
  // keep (1 or 0); the survivor scale 1 / (1 - p) is applied separately, in the order the
  // fallback's autograd multiplies (((g s) survivor) keep), so each element rounds the same way
  // and the sums over broadcast dimensions (thousands of terms) do not drift apart.
  auto keep_factor = [&](std::int64_t index) -> opmath_t {
    if (!plan.dropout) return opmath_t(1);
    return portable_random::dropout_keep(plan.key, plan.offset + static_cast<std::uint64_t>(index), plan.threshold) ? opmath_t(1) : opmath_t(0);
  };
  auto load_at = [](char* base, std::int64_t stride, std::int64_t i) {
    return static_cast<opmath_t>(*reinterpret_cast<const scalar_t*>(base + i * stride));
  };

  iter.for_each([&](char** data, const std::int64_t* strides, std::int64_t n) {
    bool contiguous = true;
    for (int k = 0; k < operands; ++k) {
      contiguous = contiguous && strides[k] == static_cast<std::int64_t>(k < outputs ? sizeof(opmath_t) : sizeof(scalar_t));
    }
    std::int64_t i = 0;
    if (contiguous) {
      const std::int64_t first = (data[0] - gv_base) / static_cast<std::int64_t>(sizeof(opmath_t));
      auto ptr = [&](int k) { return reinterpret_cast<const scalar_t*>(data[k]); };
      cpu::KeepLanes<opmath_t> keep(plan.key, plan.threshold, plan.offset + static_cast<std::uint64_t>(first), opmath_t(1));
      for (; i + IO::kWidth <= n; i += IO::kWidth) {
        const Vec m = plan.dropout ? keep.next() : Vec(opmath_t(1));
        const Vec g = IO::load(ptr(plan.grad) + i);
        const Vec s = plan.scale >= 0 ? IO::load(ptr(plan.scale) + i) : Vec(scalar_scale);
        Vec gv = g * s;
        if (plan.dropout) gv = gv * Vec(survivor) * m;
        OutIO::store(reinterpret_cast<opmath_t*>(data[0]) + i, gv);
        if (plan.gs) {
          Vec u = IO::load(ptr(plan.x) + i);
          if (plan.bias >= 0) u = u + IO::load(ptr(plan.bias) + i);
          if (plan.dropout) u = u * m * Vec(survivor);
          OutIO::store(reinterpret_cast<opmath_t*>(data[1]) + i, g * u);
        }
      }
    }
    for (; i < n; ++i) {
      const opmath_t m = keep_factor((data[0] + i * strides[0] - gv_base) / static_cast<std::int64_t>(sizeof(opmath_t)));
      const opmath_t g = load_at(data[plan.grad], strides[plan.grad], i);
      const opmath_t s = plan.scale >= 0 ? load_at(data[plan.scale], strides[plan.scale], i) : scalar_scale;
      opmath_t gv = g * s;
      if (plan.dropout) gv = gv * survivor * m;
      *reinterpret_cast<opmath_t*>(data[0] + i * strides[0]) = gv;
      if (plan.gs) {
        opmath_t u = load_at(data[plan.x], strides[plan.x], i);
        if (plan.bias >= 0) u += load_at(data[plan.bias], strides[plan.bias], i);
        if (plan.dropout) u = u * m * survivor;
        *reinterpret_cast<opmath_t*>(data[1] + i * strides[1]) = g * u;
      }
    }
  });
}

// `full` (opmath, the output's shape) summed to `like`'s shape, in like's dtype.
at::Tensor summed_to(const at::Tensor& full, const at::Tensor& like) {
  const at::Tensor out = like.sizes() == full.sizes() ? full : full.sum_to_size(like.sizes());
  return out.to(like.scalar_type());
}

std::vector<at::Tensor> backward(const OpCall& call, const at::Tensor& grad_out) {
  const at::Tensor x = call.tensor("x");
  const at::Tensor bias = call.tensor("bias");
  const at::Tensor scale = call.tensor("scale");
  const at::Tensor residual = call.tensor("residual");
  const std::vector<std::int64_t> shape = bias.defined() ? at::infer_size(x.sizes(), bias.sizes()) : x.sizes().vec();
  const at::TensorOptions opmath_options = x.options().dtype(at::toOpMathType(x.scalar_type()));
  // Contiguous, so an element's offset from the base is its row-major index: the mask counter.
  at::Tensor gv = at::empty(shape, opmath_options);
  at::Tensor gs = scale.defined() ? at::empty(shape, opmath_options) : at::Tensor();

  BackwardPlan plan;
  at::TensorIteratorConfig config;
  config.check_all_same_dtype(false).add_output(gv);
  plan.gs = gs.defined();
  if (plan.gs) config.add_output(gs);
  int next = plan.gs ? 2 : 1;
  config.add_const_input(grad_out);
  plan.grad = next++;
  config.add_const_input(x);
  plan.x = next++;
  if (bias.defined()) {
    config.add_const_input(bias);
    plan.bias = next++;
  }
  if (scale.defined()) {
    config.add_const_input(scale);
    plan.scale = next++;
  }
  auto iter = config.build();
  set_dropout(plan, call);

  const char* base = static_cast<const char*>(gv.const_data_ptr());
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "bias_dropout_add_scale_backward_cpu",
                                  [&] { run_backward<scalar_t>(iter, plan, base); });

  std::vector<at::Tensor> grads(4);
  grads[0] = summed_to(gv, x);
  if (bias.defined()) grads[1] = summed_to(gv, bias);
  if (scale.defined()) grads[2] = summed_to(gs, scale);
  if (residual.defined()) {
    grads[3] = residual.sizes() == grad_out.sizes() ? grad_out
                                                    : grad_out.to(opmath_options.dtype()).sum_to_size(residual.sizes()).to(residual.scalar_type());
  }
  return grads;
}

}  // namespace
}  // namespace crossdev::ops::bias_dropout_add_scale::CPU_CAPABILITY

CROSSDEV_REGISTER_CPU_KERNELS(bias_dropout_add_scale, &forward, &backward)
