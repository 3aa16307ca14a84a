// Forward and backward are both single elementwise passes (TensorIterator + at::vec; a contiguous
// forward skips TensorIterator: cpu::elementwise_range). tanh is
// at::vec's: Sleef's vectorized tanhf (1.0 ulp) in the AVX2 and AVX512 copies, libm in DEFAULT.
// Compiled once per instruction set (CPU_CAPABILITY, ops/cpu/dispatch.h).
#include <ATen/Dispatch.h>
#include <ATen/Functions.h>

#include <cmath>

#include "ops/cpu/dispatch.h"
#include "ops/output.h"
#include "ops/cpu/elementwise.h"
#include "ops/cpu/rows.h"
#include "ops/gelu_tanh/kernels.h"

namespace crossdev::ops::gelu_tanh::CPU_CAPABILITY {
namespace {

at::Tensor forward(const OpCall& call) {
  const at::Tensor& x = call.tensor("x");
  at::Tensor out = output_for(call, x.sizes(), x.options());
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "gelu_tanh_fused_cpu", [&] {
    using Vec = typename cpu::VecIO<scalar_t>::Vec;
    using opmath_t = typename cpu::VecIO<scalar_t>::opmath_t;
    const opmath_t beta(kBeta), kappa(kKappa), half(0.5), one(1);
    const auto scalar_op = [=](opmath_t v) { return half * v * (one + std::tanh(beta * (v + kappa * v * v * v))); };
    const auto vec_op = [=](Vec v) {
      const Vec inner = Vec(beta) * (v + Vec(kappa) * v * v * v);
      return Vec(half) * v * (Vec(one) + inner.tanh());
    };
    if (x.is_contiguous()) {  // out is contiguous (output_for): no TensorIterator needed
      const scalar_t* const in[] = {x.const_data_ptr<scalar_t>()};
      scalar_t* const op = out.mutable_data_ptr<scalar_t>();
      cpu::parallel_row_ranges(x.numel(), 1, [&](std::int64_t begin, std::int64_t end) {
        cpu::elementwise_range<scalar_t, 1>(op, in, begin, end, scalar_op, vec_op);
      });
      return;
    }
    auto iter = at::TensorIteratorConfig().add_output(out).add_const_input(x).build();
    cpu::elementwise<scalar_t, 1>(iter, scalar_op, vec_op);
  });
  return out;
}

// d/dx = 0.5 * (1 + t) + 0.5 * x * (1 - t^2) * beta * (1 + 3 * kappa * x^2), t = tanh(inner).
std::vector<at::Tensor> backward(const OpCall& call, const at::Tensor& grad_out) {
  const at::Tensor x = call.tensor("x");
  at::Tensor grad_x = at::empty(x.sizes(), x.options());
  auto iter = at::TensorIteratorConfig().add_output(grad_x).add_const_input(grad_out).add_const_input(x).build();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "gelu_tanh_backward_cpu", [&] {
    using Vec = typename cpu::VecIO<scalar_t>::Vec;
    using opmath_t = typename cpu::VecIO<scalar_t>::opmath_t;
    const opmath_t beta(kBeta), kappa(kKappa), half(0.5), one(1), three(3);
    cpu::elementwise<scalar_t, 2>(
        iter,
        [=](opmath_t g, opmath_t v) {
          const opmath_t t = std::tanh(beta * (v + kappa * v * v * v));
          return g * (half * (one + t) + half * v * (one - t * t) * beta * (one + three * kappa * v * v));
        },
        [=](Vec g, Vec v) {
          const Vec t = (Vec(beta) * (v + Vec(kappa) * v * v * v)).tanh();
          const Vec dinner = Vec(beta) * (Vec(one) + Vec(three * kappa) * v * v);
          return g * (Vec(half) * (Vec(one) + t) + Vec(half) * v * (Vec(one) - t * t) * dinner);
        });
  });
  return {grad_x};
}

}  // namespace
}  // namespace crossdev::ops::gelu_tanh::CPU_CAPABILITY

CROSSDEV_REGISTER_CPU_KERNELS(gelu_tanh, &forward, &backward)
