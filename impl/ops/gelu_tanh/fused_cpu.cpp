// Forward and backward are both single elementwise passes (TensorIterator + at::vec; a contiguous
// forward skips TensorIterator: cpu::elementwise_range).
// Forward in float opmath (float, float16, bfloat16): 0.5 x (1 + tanh(u)) = x sigmoid(2u)
// = x / (1 + exp(-2u)), with at::vec's exp_u20 (the fast exp ATen's own softmax uses; libm in
// DEFAULT). Sleef's tanhf (1.0 ulp, an expm1 in double-float arithmetic) was most of the call's
// time at every size, and ATen's gelu pays it too. exp_u20's error (~20 ulp of exp) reaches the
// result scaled by E / (1 + E) <= 1: a few ulp of y, far inside float32's tolerance (rtol
// 1.3e-6, atol 1e-5). For x = -inf the result is -inf (ATen's tanh form gives NaN).
// In double opmath (float64: gradcheck's dtype, tolerance 1e-7) the tanh form, with Sleef's tanh.
// The backward keeps the tanh form in every dtype (no per-call or sweep target on it).
// Compiled once per instruction set (CPU_CAPABILITY, ops/cpu/dispatch.h).
#include <ATen/Dispatch.h>
#include <ATen/Functions.h>

#include <cmath>
#include <type_traits>

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
    // float opmath: x / (1 + exp(-2u)), u = beta (x + kappa x^3); double: the tanh form.
    constexpr bool kSigmoidForm = std::is_same_v<opmath_t, float>;
    const opmath_t minus_two_beta(-2 * kBeta);
    const auto scalar_op = [=](opmath_t v) {
      if constexpr (kSigmoidForm) {
        return v / (one + std::exp(minus_two_beta * (v + kappa * v * v * v)));
      } else {
        return half * v * (one + std::tanh(beta * (v + kappa * v * v * v)));
      }
    };
    const auto vec_op = [=](Vec v) {
      if constexpr (kSigmoidForm) {
        const Vec minus_two_u = Vec(minus_two_beta) * at::vec::fmadd(Vec(kappa) * v, v * v, v);
        return v / (Vec(one) + minus_two_u.exp_u20());
      } else {
        const Vec inner = Vec(beta) * (v + Vec(kappa) * v * v * v);
        return Vec(half) * v * (Vec(one) + inner.tanh());
      }
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
