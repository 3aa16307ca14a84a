// CUDA: every op has a fused .cu forward and backward (impl/ops/cuda/). For every op, shape set
// and dtype: dispatch on cuda:0 must run the fused kernel and match the CPU fallback on the same
// portable inputs, and the fused backward (op->run(Impl::Fused) with grad-requiring inputs) must
// match the CPU fallback's autograd gradients. bias_dropout_add_scale's CUDA kernel must drop
// exactly the elements the CPU fused kernel drops (the portable mask, bit for bit).
// Every test skips when there is no CUDA device.
#include <ATen/Context.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <map>

#include <ATen/CPUGeneratorImpl.h>

#include "ops/generator_stream.h"
#include "ops/portable_random.h"
#include "ops_test_util.h"

namespace crossdev::ops::testing {
namespace {

const c10::Device kCuda(c10::kCUDA, 0);
const c10::Device kCpu(c10::kCPU);

at::Tensor portable_weight(const at::Tensor& like) {
  return portable_random::uniform_tensor(portable_random::stream_key({"cuda_grad_test", "weight"}, 13), like.sizes(),
                                         -1.0, 1.0)
      .to(like.scalar_type());
}

class CudaKernels : public ::testing::TestWithParam<OpCase> {};

TEST_P(CudaKernels, ForwardDispatchesFusedAndMatchesCpuFallback) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  const OpCase& c = GetParam();
  const OpSpec* op = find_op(c.op);
  for (at::ScalarType dtype : all_dtypes()) {
    SCOPED_TRACE(dtype_name(dtype));
    const OpCall cuda_call = op->make_inputs(c.shape_set, dtype, kCuda, 7);
    const OpCall cpu_call = op->make_inputs(c.shape_set, dtype, kCpu, 7);
    DispatchRecord record;
    const at::Tensor out = op->dispatch(cuda_call, &record);
    EXPECT_EQ(record.ran, Impl::Fused) << (record.rejected.empty() ? "" : record.rejected.front().reason);
    EXPECT_TRUE(out.is_cuda());
    EXPECT_TRUE(out.is_contiguous());
    EXPECT_EQ(out.scalar_type(), dtype);
    EXPECT_EQ(close_mismatch(out.cpu(), op->run(Impl::Fallback, cpu_call), default_tolerance(dtype)), "");
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, CudaKernels, ::testing::ValuesIn(all_cases(/*include_large=*/true)), case_name);

// Gradients: without "large" (as test_gradients.cpp), where float32 sums over ~1k broadcast rows
// differ from the CPU reference's by summation order alone.
class CudaBackward : public ::testing::TestWithParam<OpCase> {};

TEST_P(CudaBackward, FusedBackwardMatchesCpuFallbackGradients) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  const OpCase& c = GetParam();
  const OpSpec* op = find_op(c.op);
  for (at::ScalarType dtype : all_dtypes()) {
    SCOPED_TRACE(dtype_name(dtype));
    const OpCall cuda_call = op->make_inputs(c.shape_set, dtype, kCuda, 9);
    const OpCall cpu_call = op->make_inputs(c.shape_set, dtype, kCpu, 9);
    auto [fused_out, fused_leaves] = forward_with_leaves(*op, Impl::Fused, cuda_call);
    auto [ref_out, ref_leaves] = forward_with_leaves(*op, Impl::Fallback, cpu_call);
    ASSERT_TRUE(fused_out.is_cuda());
    EXPECT_EQ(close_mismatch(fused_out.cpu(), ref_out, default_tolerance(dtype)), "");
    const at::Tensor weight = portable_weight(ref_out);
    fused_out.backward(weight.to(kCuda));
    ref_out.backward(weight);
    for (const auto& [name, leaf] : ref_leaves) {
      SCOPED_TRACE(name);
      const at::Tensor fused_grad = fused_leaves.at(name).grad();
      ASSERT_TRUE(fused_grad.defined());
      EXPECT_TRUE(fused_grad.is_cuda());
      EXPECT_EQ(fused_grad.sizes(), leaf.sizes());  // broadcast inputs: reduced to their own shape
      EXPECT_EQ(close_mismatch(fused_grad.cpu(), leaf.grad(), default_tolerance(dtype)), "");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, CudaBackward, ::testing::ValuesIn(all_cases(/*include_large=*/false)), case_name);

// The backward op's CUDA kernel, called through the dispatcher: one gradient per differentiable
// input only (rotary's x, cos and sin; softmax's scores, not its bool mask), matching the CPU's.
TEST(CudaKernelsBackwardOp, OneGradientPerDifferentiableInput) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  struct Case {
    const char* op;
    std::vector<c10::IValue> (*arguments)(const OpCall&);
    std::size_t gradients;
  };
  const Case cases[] = {
      {"rotary", [](const OpCall& c) -> std::vector<c10::IValue> { return {c.tensor("x"), c.tensor("cos"), c.tensor("sin")}; }, 3},
      {"scaled_masked_softmax",
       [](const OpCall& c) -> std::vector<c10::IValue> { const at::Tensor mask = c.tensor("mask");
         return {c.tensor("scores"), mask.defined() ? c10::IValue(mask) : c10::IValue(), c.scalar("scale", 1.0)}; }, 1},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.op);
    const OpSpec* op = find_op(k.op);
    const c10::OperatorHandle handle =
        c10::Dispatcher::singleton().findSchemaOrThrow((std::string("crossdev::") + k.op + "_backward").c_str(), "");
    auto run = [&](c10::Device device) {
      const OpCall call = op->make_inputs("basic", at::kFloat, device, 3);
      const at::Tensor out = op->run(Impl::Fallback, call);
      torch::jit::Stack stack{portable_weight(out).to(device)};
      for (c10::IValue& v : k.arguments(call)) stack.push_back(std::move(v));
      handle.callBoxed(&stack);
      return stack;
    };
    const torch::jit::Stack cuda_grads = run(kCuda);
    const torch::jit::Stack cpu_grads = run(kCpu);
    ASSERT_EQ(cuda_grads.size(), k.gradients);
    ASSERT_EQ(cpu_grads.size(), k.gradients);
    for (std::size_t g = 0; g < k.gradients; ++g) {
      EXPECT_TRUE(cuda_grads[g].toTensor().is_cuda());
      EXPECT_EQ(close_mismatch(cuda_grads[g].toTensor().cpu(), cpu_grads[g].toTensor(), default_tolerance(at::kFloat)), "");
    }
  }
}

// Dropout: the CUDA kernel keeps exactly the elements the CPU fused kernel keeps, which are the
// portable mask's. x = 1 (+ bias 1), no residual, scale 1: an output element is 0 iff dropped,
// and 1/(1-p) (or 2/(1-p)) iff kept.
TEST(CudaKernelsDropout, SameKeptElementsAsCpuFused) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  const OpSpec* op = find_op("bias_dropout_add_scale");
  const std::vector<std::vector<std::int64_t>> shapes = {{4, 67}, {2, 8, 64}, {3, 5, 67}, {1}, {4, 256, 1024}};
  for (at::ScalarType dtype : all_dtypes()) {
    for (const auto& shape : shapes) {
      for (double p : {0.1, 0.5, 0.9, 1.0}) {
        for (bool with_bias : {false, true}) {
          for (std::uint64_t seed : {0ULL, 7ULL, 123456789ULL}) {
            SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + c10::str(at::IntArrayRef(shape)) + " p=" + std::to_string(p) +
                         (with_bias ? " bias" : "") + " seed=" + std::to_string(seed));
            auto make = [&](c10::Device device) {
              OpCall call;
              call.tensors["x"] = at::ones(shape, at::TensorOptions().dtype(dtype).device(device));
              if (with_bias) call.tensors["bias"] = at::ones({shape.back()}, at::TensorOptions().dtype(dtype).device(device));
              call.scalars["p"] = p;
              call.training = true;
              call.generator = generator_stream::harness_generator(device, seed);  // one stream on both
              return call;
            };
            const at::Tensor cuda_out = op->run(Impl::Fused, make(kCuda)).cpu();
            const at::Tensor cpu_out = op->run(Impl::Fused, make(kCpu));
            const at::Tensor cuda_kept = cuda_out.ne(0);
            const at::Tensor cpu_kept = cpu_out.ne(0);
            EXPECT_TRUE(at::equal(cuda_kept, cpu_kept));
            const generator_stream::Stream stream = generator_stream::draw(at::detail::createCPUGenerator(seed), 1);
            EXPECT_TRUE(at::equal(cuda_kept, portable_random::dropout_keep_mask(stream.seed, stream.offset, shape, p, kCpu)));
            EXPECT_TRUE(at::equal(cuda_out, cpu_out));  // 0 or (1 + bias) / (1 - p), both rounded once
            // A CUDA generator's own (seed, Philox offset) is the stream, offset included.
            OpCall with_offset = make(kCuda);
            at::Generator cuda_gen = at::globalContext().defaultGenerator(kCuda).clone();
            cuda_gen.set_current_seed(seed);
            cuda_gen.set_offset(1024);
            with_offset.generator = cuda_gen;
            EXPECT_TRUE(at::equal(op->run(Impl::Fused, with_offset).cpu().ne(0),
                                  portable_random::dropout_keep_mask(seed, 1024, shape, p, kCpu)));
          }
        }
      }
    }
  }
}

// Inference (training = false) and p = 0 drop nothing on CUDA either.
TEST(CudaKernelsDropout, NoDropoutWhenNotTrainingOrPZero) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  const OpSpec* op = find_op("bias_dropout_add_scale");
  for (bool training : {false, true}) {
    OpCall call;
    call.tensors["x"] = at::ones({3, 67}, at::TensorOptions().dtype(at::kFloat).device(kCuda));
    call.scalars["p"] = training ? 0.0 : 0.5;
    call.training = training;
    EXPECT_TRUE(at::equal(op->run(Impl::Fused, call).cpu(), at::ones({3, 67})));
  }
}

}  // namespace
}  // namespace crossdev::ops::testing
