// Fused CPU kernel vs the fallback (the semantic reference) for every op, dtype and shape set,
// at torch.testing.assert_close default tolerances.
#include <ATen/Parallel.h>

#include "ops_test_util.h"

namespace crossdev::ops::testing {
namespace {

class FusedVsFallback : public ::testing::TestWithParam<OpCase> {};

TEST_P(FusedVsFallback, ForwardMatches) {
  const OpCase& c = GetParam();
  const OpSpec* op = find_op(c.op);
  ASSERT_NE(op, nullptr);
  for (at::ScalarType dtype : all_dtypes()) {
    SCOPED_TRACE(dtype_name(dtype));
    const OpCall call = op->make_inputs(c.shape_set, dtype, c10::Device(c10::kCPU), /*seed=*/7);
    const at::Tensor fused = op->run(Impl::Fused, call);
    const at::Tensor fallback = op->run(Impl::Fallback, call);
    EXPECT_EQ(close_mismatch(fused, fallback, default_tolerance(dtype)), "");
    EXPECT_EQ(fused.scalar_type(), dtype);
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, FusedVsFallback, ::testing::ValuesIn(all_cases(/*include_large=*/true)), case_name);

TEST(ShapeSets, EveryOpHasTheRequiredSets) {
  for (const OpSpec* op : all_ops()) {
    const std::vector<std::string> sets = op->shape_sets();
    for (const char* required : {"basic", "empty", "size1", "odd_tail", "strided", "broadcast", "large"}) {
      EXPECT_NE(std::find(sets.begin(), sets.end(), required), sets.end()) << op->name() << " lacks " << required;
    }
  }
}

TEST(ShapeSets, StridedSetHasANonContiguousInput) {
  for (const OpSpec* op : all_ops()) {
    const OpCall call = op->make_inputs("strided", at::kFloat, c10::Device(c10::kCPU), 1);
    bool non_contiguous = false;
    for (const auto& [name, t] : call.tensors) non_contiguous = non_contiguous || !t.is_contiguous();
    EXPECT_TRUE(non_contiguous) << op->name();
  }
}

TEST(ShapeSets, EmptySetIsEmptyAndOddTailIsNotAVectorMultiple) {
  for (const OpSpec* op : all_ops()) {
    const OpCall empty = op->make_inputs("empty", at::kFloat, c10::Device(c10::kCPU), 1);
    EXPECT_EQ(op->run(Impl::Fused, empty).numel(), 0) << op->name();
    const OpCall odd = op->make_inputs("odd_tail", at::kFloat, c10::Device(c10::kCPU), 1);
    EXPECT_NE(op->run(Impl::Fallback, odd).size(-1) % 8, 0) << op->name();
  }
}

TEST(ShapeSets, UnknownSetIsAClearError) {
  const OpSpec* op = find_op("modulate");
  try {
    op->make_inputs("nope", at::kFloat, c10::Device(c10::kCPU), 1);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown shape set 'nope'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("odd_tail"), std::string::npos) << e.what();
  }
}

// The fused output must not depend on how the work is split: 2 threads == 1 thread. The
// thread count is forced (and restored even on failure) so the test also bites on 1-core runners.
TEST(FusedKernels, ThreadCountDoesNotChangeTheResult) {
  struct RestoreThreads {
    int threads = at::get_num_threads();
    ~RestoreThreads() { at::set_num_threads(threads); }
  } restore;
  for (const OpSpec* op : all_ops()) {
    const OpCall call = op->make_inputs("large", at::kFloat, c10::Device(c10::kCPU), 3);
    at::set_num_threads(2);
    const at::Tensor many = op->run(Impl::Fused, call);
    at::set_num_threads(1);
    const at::Tensor one = op->run(Impl::Fused, call);
    EXPECT_TRUE(at::equal(many, one)) << op->name();
  }
}

}  // namespace
}  // namespace crossdev::ops::testing
