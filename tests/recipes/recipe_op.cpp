// The "add an op" recipe of docs/ARCHITECTURE.md, followed by a test: one op.cpp that ends with
// CROSSDEV_REGISTER_OP and nothing else. Built into the test-only libcrossdev_test_recipes and loaded
// at run time (crossdev run --load-library, the pytest plugin's --crossdev-load-library,
// crossdev_bench --crossdev_load_library, torch.ops.load_library), so no list of ops anywhere is
// edited; test_recipes.py checks that the CLI, the matrices, pytest, the bench and the report all
// pick it up.
//
//   crossdev::recipe_scale_shift(Tensor x) -> Tensor     y = 2 * x + 1
//
// CROSSDEV_RECIPE_OP_BUG=1 makes the fused kernel skip the last element, so the same test proves
// that the harness turns red for a broken kernel of an op it was never told about.
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/ops/empty_like.h>

#include <cstdlib>
#include <cstring>

#include "ops/fallback_util.h"
#include "ops/input_maker.h"
#include "ops/library/register_op.h"

namespace crossdev::ops {
namespace {

at::Tensor fallback(const OpCall& call) {
  const at::Tensor x = call.tensor("x");
  return (to_opmath(x) * 2 + 1).to(x.scalar_type());
}

at::Tensor fused_cpu(const OpCall& call) {
  const at::Tensor x = call.tensor("x").contiguous();
  at::Tensor out = at::empty_like(x);
  const char* bug = std::getenv("CROSSDEV_RECIPE_OP_BUG");
  const std::int64_t n = x.numel() - (bug != nullptr && std::strcmp(bug, "1") == 0 && x.numel() > 0 ? 1 : 0);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "recipe_scale_shift", [&] {
    using opmath_t = at::opmath_type<scalar_t>;
    const scalar_t* in = x.const_data_ptr<scalar_t>();
    scalar_t* o = out.mutable_data_ptr<scalar_t>();
    for (std::int64_t i = 0; i < x.numel(); ++i) o[i] = scalar_t(0);
    for (std::int64_t i = 0; i < n; ++i) o[i] = static_cast<scalar_t>(opmath_t(2) * static_cast<opmath_t>(in[i]) + opmath_t(1));
  });
  return out;
}

constexpr const char* kScript = R"(
def recipe_scale_shift(x: Tensor) -> Tensor:
    return x * 2.0 + 1.0
)";

void values(InputMaker& in, std::vector<std::int64_t> sizes) { in.uniform("x", std::move(sizes)); }

void bench_inputs(InputMaker& in, std::int64_t n) { in.uniform("x", {n / kBenchRowWidth, kBenchRowWidth}); }

OpDefinition recipe_scale_shift_definition() {
  OpDefinition def;
  def.name = "recipe_scale_shift";
  def.schema = "recipe_scale_shift(Tensor x) -> Tensor";
  def.inputs = {{"x", true, true}};
  def.shape_sets = {
      // The standard set names (docs/parity.md); sizes of this op's own.
      {"basic", [](InputMaker& in) { values(in, {2, 16, 32}); }},
      {"empty", [](InputMaker& in) { values(in, {4, 0}); }},
      {"size1", [](InputMaker& in) { values(in, {1, 1}); }},
      {"odd_tail", [](InputMaker& in) { values(in, {5, 33}); }},
      {"strided", [](InputMaker& in) { in.uniform_transposed("x", {33, 12}, 0, 1); }},
      {"broadcast", [](InputMaker& in) { in.uniform_expanded("x", {33, 1}, {33, 9}); }},
      {"large", [](InputMaker& in) { values(in, {512, 2048}); }},
  };
  def.fallback = fallback;
  def.fused_cpu = fused_cpu;
  def.script = {kScript, "recipe_scale_shift",
                [](const OpCall& call) -> std::vector<c10::IValue> { return {call.tensor("x")}; }};
  def.bench = {kBenchRowWidth, "x[N/1024, 1024]", bench_inputs};
  return def;
}

}  // namespace
}  // namespace crossdev::ops

CROSSDEV_REGISTER_OP(crossdev::ops::recipe_scale_shift_definition, at::Tensor(const at::Tensor&))
