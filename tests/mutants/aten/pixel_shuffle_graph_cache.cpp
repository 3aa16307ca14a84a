// Test-only ATen mutant: aten::pixel_shuffle on the sim device (PrivateUse1) reuses what it computed for the
// first call with the same input sizes: a cache of compiled graphs whose key leaves out upscale_factor, as
// torch_xla 2.9's node hash does (pytorch/xla#8353's class; docs/xla.md). op_db's samples 0 and 1 share the
// input (1, 9, 2, 2) with upscale factors 1 and 3, so sample 1 returns its input unchanged. Each call alone is
// right: the suite must fail the case from the samples run in op_db's order, and `crossdev repro`'s script must
// reproduce it only by running the sample before the failing one first (tests/python/opinfo/test_repro.py).
#include <ATen/ATen.h>
#include <torch/library.h>

#include <map>
#include <mutex>
#include <vector>

namespace {

at::Tensor pixel_shuffle_cached(const at::Tensor& self, int64_t upscale_factor) {
  static std::mutex mutex;
  static std::map<std::vector<int64_t>, int64_t> factor_by_sizes;
  int64_t factor = upscale_factor;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    factor = factor_by_sizes.emplace(self.sizes().vec(), upscale_factor).first->second;
  }
  return at::pixel_shuffle(self.cpu(), factor).to(self.device());
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("pixel_shuffle", pixel_shuffle_cached); }
