// CUDA: for every op, dispatch on cuda:0 (fused where a .cu kernel exists, else the fallback,
// as the record says) and compare with the CPU fallback on the same portable inputs.
#include <ATen/Context.h>

#include "ops_test_util.h"

namespace crossdev::ops::testing {
namespace {

const std::vector<std::string> kOpsWithCudaKernels = {"modulate", "gelu_tanh", "swiglu", "rms_norm"};

class CudaDispatch : public ::testing::TestWithParam<OpCase> {};

TEST_P(CudaDispatch, MatchesCpuFallback) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  const OpCase& c = GetParam();
  const OpSpec* op = find_op(c.op);
  const bool has_kernel =
      std::find(kOpsWithCudaKernels.begin(), kOpsWithCudaKernels.end(), c.op) != kOpsWithCudaKernels.end();
  for (at::ScalarType dtype : all_dtypes()) {
    SCOPED_TRACE(dtype_name(dtype));
    const OpCall cuda_call = op->make_inputs(c.shape_set, dtype, c10::Device(c10::kCUDA, 0), 7);
    const OpCall cpu_call = op->make_inputs(c.shape_set, dtype, c10::Device(c10::kCPU), 7);
    DispatchRecord record;
    const at::Tensor out = op->dispatch(cuda_call, &record);
    EXPECT_EQ(record.ran, has_kernel ? Impl::Fused : Impl::Fallback);
    EXPECT_TRUE(out.is_cuda());
    EXPECT_EQ(close_mismatch(out.cpu(), op->run(Impl::Fallback, cpu_call), default_tolerance(dtype)), "");
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, CudaDispatch, ::testing::ValuesIn(all_cases(/*include_large=*/true)), case_name);

}  // namespace
}  // namespace crossdev::ops::testing
