// The shape helpers of the eligibility predicates (ops/eligibility.h) against ATen's own
// broadcasting (at::infer_size), an independent computation: every pair of shapes from a small
// grid, every candidate operand shape.
#include <ATen/ExpandUtils.h>
#include <gtest/gtest.h>

#include <vector>

#include "ops/eligibility.h"

namespace crossdev::ops {
namespace {

using Shape = std::vector<std::int64_t>;

// Whether ATen broadcasts a and b (infer_size raises otherwise).
bool aten_broadcastable(const Shape& a, const Shape& b) {
  try {
    (void)at::infer_size(a, b);
    return true;
  } catch (const c10::Error&) {
    return false;
  }
}

// Whether t broadcasts to exactly `target`: ATen's broadcast of t and target is target itself.
bool aten_broadcasts_to(const Shape& t, const Shape& target) {
  return aten_broadcastable(t, target) && at::infer_size(t, target) == target;
}

std::vector<Shape> grid() {
  return {{}, {1}, {4}, {3}, {1, 4}, {3, 1}, {3, 4}, {2, 3, 4}, {2, 1, 4}, {1, 1, 1}, {2, 3, 1}, {5, 3, 4}};
}

TEST(ShapeHelpers, BroadcastableAgreesWithAten) {
  for (const Shape& a : grid()) {
    for (const Shape& b : grid()) {
      EXPECT_EQ(broadcastable(at::IntArrayRef(a), at::IntArrayRef(b)), aten_broadcastable(a, b))
          << c10::IntArrayRef(a) << " with " << c10::IntArrayRef(b);
    }
  }
}

TEST(ShapeHelpers, BroadcastsToBroadcastOfAgreesWithAten) {
  int checked = 0, holds = 0;
  for (const Shape& a : grid()) {
    for (const Shape& b : grid()) {
      if (!aten_broadcastable(a, b)) continue;
      const Shape target = at::infer_size(a, b);
      for (const Shape& t : grid()) {
        const bool want = aten_broadcasts_to(t, target);
        EXPECT_EQ(broadcasts_to_broadcast_of(at::IntArrayRef(t), at::IntArrayRef(a), at::IntArrayRef(b)), want)
            << c10::IntArrayRef(t) << " to the broadcast of " << c10::IntArrayRef(a) << " and " << c10::IntArrayRef(b);
        ++checked;
        holds += want ? 1 : 0;
      }
    }
  }
  // The grid exercises both answers, many times each.
  EXPECT_GT(holds, 50);
  EXPECT_GT(checked - holds, 50);
}

}  // namespace
}  // namespace crossdev::ops
