// Storage, copies and views on the sim device: round trips are exact, views alias their base,
// resize_ reallocates through the sim allocator, and the device is named "sim".
#include "sim_test_support.h"

#include <c10/core/DeviceType.h>

namespace crossdev::sim::testing {
namespace {

class SimCopyViewTest : public SimTest {};

TEST_F(SimCopyViewTest, BackendIsRegisteredUnderTheNameSim) {
  EXPECT_TRUE(backend_registered());
  EXPECT_EQ(c10::get_privateuse1_backend(), "sim");
  EXPECT_EQ(sim_device(0).str(), "sim:0");
  EXPECT_EQ(c10::Device("sim:0"), sim_device(0));
  register_backend();  // idempotent
  EXPECT_EQ(c10::get_privateuse1_backend(), "sim");
}

TEST_F(SimCopyViewTest, CpuToSimToCpuRoundTripIsBitExact) {
  const at::Tensor cpu = at::randn({4, 7}, at::kFloat);
  const at::Tensor on = cpu.to(sim_device(0));
  EXPECT_EQ(on.device(), sim_device(0));
  EXPECT_TRUE(on.is_privateuseone());
  const at::Tensor back = on.to(at::kCPU);
  EXPECT_TRUE(back.is_cpu());
  EXPECT_TRUE(at::equal(back, cpu));
  EXPECT_NE(back.data_ptr(), cpu.data_ptr());
}

TEST_F(SimCopyViewTest, NonContiguousCopiesKeepElementOrder) {
  const at::Tensor cpu = at::arange(12, at::kFloat).reshape({3, 4});
  const at::Tensor transposed_on_sim = cpu.t().to(sim_device(0));
  EXPECT_TRUE(at::equal(transposed_on_sim.to(at::kCPU), cpu.t()));
  const at::Tensor on = cpu.to(sim_device(0));
  EXPECT_TRUE(at::equal(on.t().contiguous().to(at::kCPU), cpu.t().contiguous()));
  EXPECT_TRUE(at::equal(on.t().to(at::kCPU), cpu.t()));
}

TEST_F(SimCopyViewTest, CopyBetweenSimTensorsAndWithDtypeConversion) {
  const at::Tensor cpu = at::randn({5}, at::kFloat);
  const at::Tensor a = cpu.to(sim_device(0));
  at::Tensor b = at::empty({5}, on_sim().dtype(at::kFloat));
  b.copy_(a);
  EXPECT_TRUE(at::equal(b.to(at::kCPU), cpu));
  const at::Tensor half = a.to(at::kHalf);
  EXPECT_TRUE(half.is_privateuseone());
  EXPECT_EQ(half.scalar_type(), at::kHalf);
  EXPECT_TRUE(at::equal(half.to(at::kCPU), cpu.to(at::kHalf)));
}

TEST_F(SimCopyViewTest, ViewsAliasTheirBaseStorage) {
  const at::Tensor base = at::zeros({3, 4}, on_sim());
  at::Tensor row = base.select(0, 1);
  EXPECT_EQ(row.data_ptr(), static_cast<char*>(base.data_ptr()) + 4 * sizeof(float));
  row.fill_(7.0);
  at::Tensor column = base.view({4, 3}).narrow(1, 0, 1);
  const at::Tensor expected = at::zeros({3, 4}).index_fill_(0, at::tensor({int64_t{1}}), 7.0);
  EXPECT_TRUE(at::equal(base.to(at::kCPU), expected));
  EXPECT_TRUE(at::equal(column.to(at::kCPU), expected.view({4, 3}).narrow(1, 0, 1)));
  EXPECT_TRUE(at::equal(base.as_strided({2, 2}, {1, 4}, 1).to(at::kCPU), expected.as_strided({2, 2}, {1, 4}, 1)));
}

TEST_F(SimCopyViewTest, ResizeReallocatesThroughTheSimAllocatorAndKeepsData) {
  at::Tensor t = at::tensor({1.0f, 2.0f}).to(sim_device(0));
  const MemoryStats before = memory_stats(0);
  t.resize_({4, 4});
  EXPECT_EQ(t.sizes(), (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(memory_stats(0).allocated - before.allocated, 64 - 8);
  const at::Tensor host = t.to(at::kCPU).flatten();
  EXPECT_EQ(host[0].item<float>(), 1.0f);
  EXPECT_EQ(host[1].item<float>(), 2.0f);
}

TEST_F(SimCopyViewTest, ItemReadsAScalarBack) {
  const at::Tensor t = at::arange(5, at::kFloat).to(sim_device(0));
  EXPECT_EQ(t.sum().item<float>(), 10.0f);
  EXPECT_EQ(t[3].item<float>(), 3.0f);
}

TEST_F(SimCopyViewTest, FactoryFunctionsCreateTensorsOnSim) {
  const at::Tensor ones = at::ones({2, 3}, on_sim().dtype(at::kInt));
  EXPECT_TRUE(ones.is_privateuseone());
  EXPECT_TRUE(at::equal(ones.to(at::kCPU), at::ones({2, 3}, at::kInt)));
  const at::Tensor like = at::zeros_like(ones);
  EXPECT_TRUE(like.is_privateuseone());
  EXPECT_EQ(like.sum().item<int>(), 0);
}

}  // namespace
}  // namespace crossdev::sim::testing
