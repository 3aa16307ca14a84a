// One pass over the output. The dropout mask is never materialized: element i (its row-major
// index in the contiguous output) is kept iff uniform01(dropout_key(seed), i) >= p, the same
// rule dropout_keep_mask() applies for the fallback.
#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>
#include <ATen/Functions.h>
#include <ATen/TensorIterator.h>

#include "ops/bias_dropout_add_scale/kernels.h"
#include "ops/cpu/vec_io.h"
#include "ops/portable_random.h"

namespace crossdev::ops::bias_dropout_add_scale {
namespace {

struct Plan {
  int bias = -1, scale = -1, residual = -1;  // operand indices; -1 = absent
  bool dropout = false;
  double p = 0.0;
  double survivor = 1.0;
  double scalar_scale = 1.0;
  std::uint64_t key = 0;
};

template <typename scalar_t>
void run(at::TensorIteratorBase& iter, const Plan& plan, const char* out_base) {
  using IO = cpu::VecIO<scalar_t>;
  using opmath_t = typename IO::opmath_t;
  using Vec = typename IO::Vec;
  const int operands = iter.ntensors();
  const opmath_t survivor(plan.survivor), scalar_scale(plan.scalar_scale);

  auto keep_factor = [&](std::int64_t index) -> opmath_t {
    return portable_random::uniform01(plan.key, static_cast<std::uint64_t>(index)) >= plan.p ? survivor : opmath_t(0);
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
      for (; i + IO::kWidth <= n; i += IO::kWidth) {
        Vec v = IO::load(ptr(1) + i);
        if (plan.bias >= 0) v = v + IO::load(ptr(plan.bias) + i);
        if (plan.dropout) {
          __at_align__ opmath_t keep[IO::kWidth];
          for (std::int64_t j = 0; j < IO::kWidth; ++j) keep[j] = keep_factor(first + i + j);
          v = v * Vec::loadu(keep);
        }
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

}  // namespace

at::Tensor fused_cpu(const OpCall& call) {
  const at::Tensor x = call.tensor("x");
  const at::Tensor bias = call.tensor("bias");
  // Contiguous, so an element's offset from the base is its row-major index: the mask counter.
  at::Tensor out = at::empty(bias.defined() ? at::infer_size(x.sizes(), bias.sizes()) : x.sizes().vec(), x.options());

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

  plan.dropout = dropout_active(call);
  plan.p = call.scalar("p", 0.0);
  plan.survivor = portable_random::dropout_survivor_scale(plan.p);
  plan.scalar_scale = call.scalar("scale_value", 1.0);
  plan.key = portable_random::dropout_key(call.seed);

  const char* base = static_cast<const char*>(out.const_data_ptr());
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "bias_dropout_add_scale_fused_cpu",
                                  [&] { run<scalar_t>(iter, plan, base); });
  return out;
}

}  // namespace crossdev::ops::bias_dropout_add_scale
