// mylib's fused CPU kernels, registered with PyTorch's dispatcher:
//   mylib::fused_modulate(Tensor x, Tensor shift, Tensor scale) -> Tensor
//       x * (1 + scale[:, None]) + shift[:, None]      x [B, T, D], shift/scale [B or 1, D]
//   mylib::rms_norm(Tensor x, Tensor weight, float eps=1e-06) -> Tensor
//       x * rsqrt(mean(x^2, -1) + eps) * weight         x [..., D], weight [D]
// Each has a CPU kernel (one pass, math in float for float16/bfloat16), a Meta kernel (shapes
// only, for torch.compile) and an Autograd kernel.
//
// MYLIB_BUG=1 switches on a deliberate bug in fused_modulate's tail loop (the columns after the
// last full block of 8 forget the `1 +`): rows whose D is a multiple of 8 stay right, the others
// do not. crossdev's candidate rows must catch it.
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <ATen/ATen.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>
#include <torch/autograd.h>
#include <torch/library.h>

namespace mylib {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

bool bug_enabled() {
  const char* v = std::getenv("MYLIB_BUG");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

at::ScalarType opmath(at::ScalarType t) { return t == at::kDouble ? at::kDouble : at::kFloat; }

void check_modulate(const at::Tensor& x, const at::Tensor& shift, const at::Tensor& scale) {
  TORCH_CHECK(x.dim() == 3, "mylib::fused_modulate: x must be [B, T, D], got ", x.sizes());
  for (const at::Tensor* rows : {&shift, &scale}) {
    TORCH_CHECK(rows->dim() == 2 && rows->size(1) == x.size(2) && (rows->size(0) == 1 || rows->size(0) == x.size(0)),
                "mylib::fused_modulate: shift and scale must be [B or 1, D], got ", rows->sizes());
    TORCH_CHECK(rows->scalar_type() == x.scalar_type(), "mylib::fused_modulate: dtypes differ");
  }
}

// ---- fused_modulate -----------------------------------------------------------------------

at::Tensor modulate_cpu(const at::Tensor& x_in, const at::Tensor& shift_in, const at::Tensor& scale_in) {
  check_modulate(x_in, shift_in, scale_in);
  const at::Tensor x = x_in.contiguous(), shift = shift_in.contiguous(), scale = scale_in.contiguous();
  at::Tensor out = at::empty(x.sizes(), x.options());
  const int64_t T = x.size(1), D = x.size(2);
  const bool one_row = shift.size(0) == 1, bug = bug_enabled();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "mylib::fused_modulate", [&] {
    using acc_t = at::opmath_type<scalar_t>;
    const scalar_t* xp = x.const_data_ptr<scalar_t>();
    const scalar_t* shp = shift.const_data_ptr<scalar_t>();
    const scalar_t* scp = scale.const_data_ptr<scalar_t>();
    scalar_t* op = out.mutable_data_ptr<scalar_t>();
    at::parallel_for(0, x.size(0) * T, 16, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t r = one_row ? 0 : row / T;
        const scalar_t* xr = xp + row * D;
        const scalar_t* sh = shp + r * D;
        const scalar_t* sc = scp + r * D;
        scalar_t* o = op + row * D;
        int64_t d = 0;
        for (; d + 8 <= D; d += 8) {  // the body, 8 columns at a time (the compiler vectorizes it)
          for (int64_t k = d; k < d + 8; ++k) {
            o[k] = static_cast<scalar_t>(acc_t(xr[k]) * (acc_t(1) + acc_t(sc[k])) + acc_t(sh[k]));
          }
        }
        for (; d < D; ++d) {  // the tail
          const acc_t gain = bug ? acc_t(sc[d]) : acc_t(1) + acc_t(sc[d]);
          o[d] = static_cast<scalar_t>(acc_t(xr[d]) * gain + acc_t(sh[d]));
        }
      }
    });
  });
  return out;
}

at::Tensor modulate_meta(const at::Tensor& x, const at::Tensor& shift, const at::Tensor& scale) {
  check_modulate(x, shift, scale);
  return at::empty(x.sizes(), x.options());
}

class ModulateFunction : public torch::autograd::Function<ModulateFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& shift, const at::Tensor& scale) {
    ctx->save_for_backward({x, scale});
    ctx->saved_data["rows"] = shift.size(0);
    at::AutoDispatchBelowADInplaceOrView guard;
    static const auto op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow("mylib::fused_modulate", "")
                               .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&)>();
    return op.call(x, shift, scale);
  }

  // In float (double for double), rounded once to each input's dtype.
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& x = saved[0];
    const at::Tensor& scale = saved[1];
    const at::ScalarType acc = opmath(x.scalar_type());
    const at::Tensor g = grads[0].to(acc), xf = x.to(acc), sf = scale.to(acc);
    const std::vector<int64_t> rows_shape = {ctx->saved_data["rows"].toInt(), x.size(2)};
    const at::Tensor grad_x = g * (1 + sf.unsqueeze(1));
    const at::Tensor grad_shift = at::sum_to(g.sum(1), rows_shape);
    const at::Tensor grad_scale = at::sum_to((g * xf).sum(1), rows_shape);
    return {grad_x.to(x.scalar_type()), grad_shift.to(x.scalar_type()), grad_scale.to(x.scalar_type())};
  }
};

at::Tensor modulate_autograd(const at::Tensor& x, const at::Tensor& shift, const at::Tensor& scale) {
  return ModulateFunction::apply(x, shift, scale);
}

// ---- rms_norm -----------------------------------------------------------------------------

void check_rms_norm(const at::Tensor& x, const at::Tensor& weight) {
  TORCH_CHECK(x.dim() >= 1, "mylib::rms_norm: x must have at least one dimension");
  TORCH_CHECK(weight.dim() == 1 && weight.size(0) == x.size(-1), "mylib::rms_norm: weight must be [D], got ",
              weight.sizes());
}

at::Tensor rms_norm_cpu(const at::Tensor& x_in, const at::Tensor& weight_in, double eps) {
  check_rms_norm(x_in, weight_in);
  const at::Tensor x = x_in.contiguous(), weight = weight_in.contiguous();
  at::Tensor out = at::empty(x.sizes(), x.options());
  const int64_t D = x.size(-1), rows = D == 0 ? 0 : x.numel() / D;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "mylib::rms_norm", [&] {
    using acc_t = at::opmath_type<scalar_t>;
    const scalar_t* xp = x.const_data_ptr<scalar_t>();
    const scalar_t* wp = weight.const_data_ptr<scalar_t>();
    scalar_t* op = out.mutable_data_ptr<scalar_t>();
    at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const scalar_t* xr = xp + row * D;
        acc_t sum = 0;
        for (int64_t d = 0; d < D; ++d) sum += acc_t(xr[d]) * acc_t(xr[d]);
        const acc_t inv = acc_t(1) / std::sqrt(sum / acc_t(D) + acc_t(eps));
        for (int64_t d = 0; d < D; ++d) op[row * D + d] = static_cast<scalar_t>(acc_t(xr[d]) * inv * acc_t(wp[d]));
      }
    });
  });
  return out;
}

at::Tensor rms_norm_meta(const at::Tensor& x, const at::Tensor& weight, double eps) {
  check_rms_norm(x, weight);
  return at::empty(x.sizes(), x.options());
}

class RmsNormFunction : public torch::autograd::Function<RmsNormFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight, double eps) {
    ctx->save_for_backward({x, weight});
    ctx->saved_data["eps"] = eps;
    at::AutoDispatchBelowADInplaceOrView guard;
    static const auto op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow("mylib::rms_norm", "")
                               .typed<at::Tensor(const at::Tensor&, const at::Tensor&, double)>();
    return op.call(x, weight, eps);
  }

  // n = x * r, r = rsqrt(mean(x^2) + eps): grad_x = r * (g*w - n * mean(g*w*n)), grad_w = sum(g*n).
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& x = saved[0];
    const at::Tensor& weight = saved[1];
    const at::ScalarType acc = opmath(x.scalar_type());
    const at::Tensor g = grads[0].to(acc), xf = x.to(acc), wf = weight.to(acc);
    const at::Tensor r = (xf * xf).mean(-1, /*keepdim=*/true).add(ctx->saved_data["eps"].toDouble()).rsqrt();
    const at::Tensor n = xf * r;
    const at::Tensor gw = g * wf;
    const at::Tensor grad_x = r * (gw - n * (gw * n).mean(-1, /*keepdim=*/true));
    const at::Tensor grad_weight = (g * n).reshape({-1, x.size(-1)}).sum(0);
    return {grad_x.to(x.scalar_type()), grad_weight.to(weight.scalar_type()), at::Tensor()};
  }
};

at::Tensor rms_norm_autograd(const at::Tensor& x, const at::Tensor& weight, double eps) {
  return RmsNormFunction::apply(x, weight, eps);
}

}  // namespace
}  // namespace mylib

TORCH_LIBRARY(mylib, m) {
  m.def("fused_modulate(Tensor x, Tensor shift, Tensor scale) -> Tensor");
  m.def("rms_norm(Tensor x, Tensor weight, float eps=1e-06) -> Tensor");
}

TORCH_LIBRARY_IMPL(mylib, CPU, m) {
  m.impl("fused_modulate", &mylib::modulate_cpu);
  m.impl("rms_norm", &mylib::rms_norm_cpu);
}

TORCH_LIBRARY_IMPL(mylib, Meta, m) {
  m.impl("fused_modulate", &mylib::modulate_meta);
  m.impl("rms_norm", &mylib::rms_norm_meta);
}

TORCH_LIBRARY_IMPL(mylib, Autograd, m) {
  m.impl("fused_modulate", &mylib::modulate_autograd);
  m.impl("rms_norm", &mylib::rms_norm_autograd);
}
