// One elementwise pass each way; TensorIterator broadcasts gate against up (a forward on
// contiguous operands of one shape runs without it: cpu::elementwise_range).
//   forward   out = g sigmoid(g) u
//   backward  grad_gate = grad u s (1 + g (1 - s)), grad_up = grad g s, s = sigmoid(g), both from
//             one pass; an input that was broadcast gets its gradient summed to its shape (the
//             full-size gradient kept in opmath, summed, rounded once).
// exp is at::vec's: Sleef's vectorized expf in the AVX2 and AVX512 copies, libm in DEFAULT.
// Compiled once per instruction set (CPU_CAPABILITY, ops/cpu/dispatch.h).
#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>
#include <ATen/Functions.h>

#include <array>
#include <cmath>

#include "ops/cpu/dispatch.h"
#include "ops/output.h"
#include "ops/cpu/elementwise.h"
#include "ops/cpu/rows.h"
#include "ops/swiglu/kernels.h"

namespace crossdev::ops::swiglu::CPU_CAPABILITY {
namespace {

at::Tensor forward(const OpCall& call) {
  const at::Tensor& gate = call.tensor("gate");
  const at::Tensor& up = call.tensor("up");
  at::Tensor out = output_for(call, at::infer_size(gate.sizes(), up.sizes()), gate.options());
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, gate.scalar_type(), "swiglu_fused_cpu", [&] {
    using Vec = typename cpu::VecIO<scalar_t>::Vec;
    using opmath_t = typename cpu::VecIO<scalar_t>::opmath_t;
    const auto scalar_op = [](opmath_t g, opmath_t u) { return g / (opmath_t(1) + std::exp(-g)) * u; };
    const auto vec_op = [](Vec g, Vec u) { return g / (Vec(opmath_t(1)) + g.neg().exp()) * u; };
    if (gate.sizes() == up.sizes() && gate.is_contiguous() && up.is_contiguous()) {  // no broadcast, no strides
      const scalar_t* const in[] = {gate.const_data_ptr<scalar_t>(), up.const_data_ptr<scalar_t>()};
      scalar_t* const op = out.mutable_data_ptr<scalar_t>();
      cpu::parallel_row_ranges(gate.numel(), 1, [&](std::int64_t begin, std::int64_t end) {
        cpu::elementwise_range<scalar_t, 2>(op, in, begin, end, scalar_op, vec_op);
      });
      return;
    }
    auto iter = at::TensorIteratorConfig().add_output(out).add_const_input(gate).add_const_input(up).build();
    cpu::elementwise<scalar_t, 2>(iter, scalar_op, vec_op);
  });
  return out;
}

std::vector<at::Tensor> backward(const OpCall& call, const at::Tensor& grad_out) {
  const at::Tensor gate = call.tensor("gate");
  const at::Tensor up = call.tensor("up");
  const std::vector<std::int64_t> shape = at::infer_size(gate.sizes(), up.sizes());
  const bool gate_full = gate.sizes() == at::IntArrayRef(shape);
  const bool up_full = up.sizes() == at::IntArrayRef(shape);
  const at::ScalarType dtype = gate.scalar_type();
  // Gradients of broadcast inputs are computed in opmath, then summed to the input's shape.
  const bool reduced = !gate_full || !up_full;
  const at::ScalarType grad_type = reduced ? at::toOpMathType(dtype) : dtype;
  at::Tensor grad_gate = at::empty(shape, gate.options().dtype(grad_type));
  at::Tensor grad_up = at::empty(shape, gate.options().dtype(grad_type));
  auto iter = at::TensorIteratorConfig()
                  .check_all_same_dtype(false)
                  .add_output(grad_gate)
                  .add_output(grad_up)
                  .add_const_input(grad_out)
                  .add_const_input(gate)
                  .add_const_input(up)
                  .build();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "swiglu_backward_cpu", [&] {
    CROSSDEV_VEC_IO_TYPES(scalar_t);
    const auto scalar_op = [](opmath_t d, opmath_t g, opmath_t u) {
      const opmath_t s = opmath_t(1) / (opmath_t(1) + std::exp(-g));
      return std::array<opmath_t, 2>{d * u * s * (opmath_t(1) + g * (opmath_t(1) - s)), d * g * s};
    };
    const auto vec_op = [](Vec d, Vec g, Vec u) {
      const Vec one(opmath_t(1));
      const Vec s = one / (one + g.neg().exp());
      return std::array<Vec, 2>{d * u * s * (one + g * (one - s)), d * g * s};
    };
    if (reduced) {
      cpu::elementwise_multi<scalar_t, opmath_t, 2, 3>(iter, scalar_op, vec_op);
    } else {
      cpu::elementwise_multi<scalar_t, scalar_t, 2, 3>(iter, scalar_op, vec_op);
    }
  });
  if (!gate_full) grad_gate = grad_gate.sum_to_size(gate.sizes());
  if (!up_full) grad_up = grad_up.sum_to_size(up.sizes());
  return {grad_gate.to(dtype), grad_up.to(dtype)};
}

}  // namespace
}  // namespace crossdev::ops::swiglu::CPU_CAPABILITY

CROSSDEV_REGISTER_CPU_KERNELS(swiglu, &forward, &backward)
