// Gradients: (1) the fallback's autograd gradient against central finite differences in float64
// (gradcheck's fast mode: directional derivatives along portable random directions), and
// (2) the fused implementation's backward (fused or autograd-derived) against the fallback's.
#include <torch/csrc/autograd/autograd.h>

#include "ops/portable_random.h"
#include "ops_test_util.h"

namespace crossdev::ops::testing {
namespace {

at::Tensor portable_like(const at::Tensor& t, const std::string& purpose) {
  return portable_random::uniform_tensor(portable_random::stream_key({"grad_test", purpose}, 11), t.sizes(), -1.0, 1.0)
      .to(t.scalar_type())
      .to(t.device());
}

std::vector<std::string> gradcheck_sets() { return {"basic", "size1", "odd_tail", "strided", "broadcast"}; }

class FallbackGradcheck : public ::testing::TestWithParam<std::string> {};

TEST_P(FallbackGradcheck, MatchesFiniteDifferencesInFloat64) {
  const OpSpec* op = find_op(GetParam());
  for (const std::string& set : gradcheck_sets()) {
    SCOPED_TRACE(set);
    OpCall call = op->make_inputs(set, at::kDouble, c10::Device(c10::kCPU), 5);
    for (auto& [name, t] : call.tensors) t = t.contiguous();  // perturb without aliasing broadcast views
    auto [out, leaves] = forward_with_leaves(*op, Impl::Fallback, call);
    const at::Tensor weight = portable_like(out, "weight");
    const auto grads = torch::autograd::grad({out}, [&] {
      std::vector<at::Tensor> v;
      for (auto& [n, l] : leaves) v.push_back(l);
      return v;
    }(), {weight});
    std::size_t k = 0;
    for (auto& [name, leaf] : leaves) {
      const at::Tensor analytic = grads[k++];
      for (int direction = 0; direction < 2; ++direction) {
        const at::Tensor v = portable_like(leaf, name + std::to_string(direction));
        const double h = 1e-6;
        OpCall plus = call, minus = call;
        plus.tensors[name] = call.tensor(name) + h * v;
        minus.tensors[name] = call.tensor(name) - h * v;
        const double numeric =
            ((op->run(Impl::Fallback, plus) - op->run(Impl::Fallback, minus)) * weight).sum().item<double>() / (2 * h);
        const double expected = (analytic * v).sum().item<double>();
        EXPECT_NEAR(numeric, expected, 1e-5 + 1e-3 * std::abs(expected)) << name << " direction " << direction;
      }
    }
  }
}

std::vector<std::string> op_names() {
  std::vector<std::string> names;
  for (const OpSpec* op : all_ops()) names.emplace_back(op->name());
  return names;
}

INSTANTIATE_TEST_SUITE_P(AllOps, FallbackGradcheck, ::testing::ValuesIn(op_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

class FusedBackward : public ::testing::TestWithParam<OpCase> {};

TEST_P(FusedBackward, MatchesFallbackBackward) {
  const OpCase& c = GetParam();
  const OpSpec* op = find_op(c.op);
  for (at::ScalarType dtype : all_dtypes()) {
    SCOPED_TRACE(dtype_name(dtype));
    const OpCall call = op->make_inputs(c.shape_set, dtype, c10::Device(c10::kCPU), 9);
    auto [fused_out, fused_leaves] = forward_with_leaves(*op, Impl::Fused, call);
    auto [ref_out, ref_leaves] = forward_with_leaves(*op, Impl::Fallback, call);
    const at::Tensor weight = portable_like(ref_out, "weight");
    fused_out.backward(weight);
    ref_out.backward(weight);
    for (const auto& [name, leaf] : ref_leaves) {
      SCOPED_TRACE(name);
      ASSERT_TRUE(fused_leaves.at(name).grad().defined());
      EXPECT_EQ(close_mismatch(fused_leaves.at(name).grad(), leaf.grad(), default_tolerance(dtype)), "");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, FusedBackward, ::testing::ValuesIn(all_cases(/*include_large=*/false)), case_name);

// modulate's and layer_norm_modulate's column sums (grad_shift, grad_scale) are added 16 rows at a
// time into each thread's partial (cpu::BlockedColumnSums): here each thread's rows span several
// blocks (400 rows: more than 16 per thread up to 24 threads), for one destination ([1, D]: every
// row's) and for one per batch ([B, D], 200 rows each), which the shape sets above (at most 24
// rows, 12 per thread on two threads) never reach.
class FusedBackwardManyRows : public ::testing::TestWithParam<std::string> {};

TEST_P(FusedBackwardManyRows, ColumnSumsMatchFallback) {
  const OpSpec* op = find_op(GetParam());
  for (const std::int64_t param_rows : {std::int64_t{1}, std::int64_t{2}}) {
    for (at::ScalarType dtype : {at::kFloat, at::kDouble}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + ", shift/scale rows " + std::to_string(param_rows));
      OpCall call;
      const auto input = [&](const char* name, at::IntArrayRef sizes, double scale) {
        return portable_random::uniform_tensor(portable_random::stream_key({"grad_many_rows", name}, 3), sizes, -scale, scale)
            .to(dtype);
      };
      call.tensors["x"] = input("x", {2, 200, 24}, 2.0);
      call.tensors["shift"] = input("shift", {param_rows, 24}, 1.0);
      call.tensors["scale"] = input("scale", {param_rows, 24}, 0.5);
      if (GetParam() == "layer_norm_modulate") call.scalars["eps"] = 1e-5;
      auto [fused_out, fused_leaves] = forward_with_leaves(*op, Impl::Fused, call);
      auto [ref_out, ref_leaves] = forward_with_leaves(*op, Impl::Fallback, call);
      const at::Tensor weight = portable_like(ref_out, "weight");
      fused_out.backward(weight);
      ref_out.backward(weight);
      for (const char* name : {"x", "shift", "scale"}) {
        SCOPED_TRACE(name);
        EXPECT_EQ(close_mismatch(fused_leaves.at(name).grad(), ref_leaves.at(name).grad(), default_tolerance(dtype)), "");
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(RowKernels, FusedBackwardManyRows, ::testing::Values("modulate", "layer_norm_modulate"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace crossdev::ops::testing
