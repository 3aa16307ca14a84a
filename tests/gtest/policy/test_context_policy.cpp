// The inference-context guard must change what real tensors are, not only report a name.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "policy/context_policy.h"

namespace crossdev {
namespace {

TEST(InferenceContextGuard, InferenceModeMakesInferenceTensors) {
  at::Tensor t;
  {
    InferenceContextGuard guard(DeviceKind::CUDA);
    t = at::ones({2});
  }
  EXPECT_TRUE(t.is_inference());
}

TEST(InferenceContextGuard, NoGradOnXlaKeepsNormalTensorsWithoutHistory) {
  const at::Tensor w = at::ones({2}).set_requires_grad(true);
  at::Tensor y;
  {
    InferenceContextGuard guard(DeviceKind::XLA);
    y = w * 2;
  }
  EXPECT_FALSE(y.is_inference());  // no_grad, not inference_mode: version counters stay usable
  EXPECT_FALSE(y.requires_grad());
  y.add_(1);                       // in-place on it is fine, which inference tensors outside the mode forbid
}

TEST(InferenceContextGuard, RestoresStateOnExit) {
  { InferenceContextGuard guard(DeviceKind::XLA); }
  EXPECT_TRUE(c10::GradMode::is_enabled());
  { InferenceContextGuard guard(DeviceKind::CPU); }
  EXPECT_FALSE(c10::InferenceMode::is_enabled());
}

TEST(DistributedPolicy, MpsRaisesSeed004Text) {
  try {
    require_distributed_supported(DeviceKind::MPS);
    FAIL();
  } catch (const PolicyError& e) {
    EXPECT_STREQ(e.what(), "Distributed training is not supported on MPS");
  }
  EXPECT_NO_THROW(require_distributed_supported(DeviceKind::CUDA));
}

}  // namespace
}  // namespace crossdev
