// Per row of Tk keys, in an opmath row buffer: logits = scale * scores with masked keys at -inf
// (vectorized scale, then a byte loop over the mask), a vectorized max, a vectorized exp-and-sum,
// and one normalizing store. The mask is viewed expanded to the scores' shape, so its row offset
// follows its own (possibly zero) strides.
#include <ATen/Dispatch.h>
#include <ATen/Functions.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ops/cpu/rows.h"
#include "ops/scaled_masked_softmax/kernels.h"

namespace crossdev::ops::scaled_masked_softmax {
namespace {

// Element offset of row `r` of a tensor viewed with `sizes` (last dim excluded) and `strides`.
std::int64_t row_offset(std::int64_t r, at::IntArrayRef sizes, at::IntArrayRef strides) {
  std::int64_t offset = 0;
  for (std::int64_t k = static_cast<std::int64_t>(sizes.size()) - 2; k >= 0; --k) {
    const std::int64_t index = r % sizes[k];
    r /= sizes[k];
    offset += index * strides[k];
  }
  return offset;
}

}  // namespace

at::Tensor fused_cpu(const OpCall& call) {
  const at::Tensor scores = call.tensor("scores").contiguous();
  at::Tensor out = at::empty(scores.sizes(), scores.options());
  if (scores.numel() == 0) return out;
  at::Tensor mask = call.tensor("mask");
  if (mask.defined()) {
    mask = mask.expand(scores.sizes());
    if (mask.stride(-1) != 1) mask = mask.contiguous();
  }
  const std::int64_t tk = scores.size(-1);
  const std::int64_t rows = scores.numel() / tk;
  const double scale = call.scalar("scale", 1.0);

  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, scores.scalar_type(), "scaled_masked_softmax_fused_cpu", [&] {
    using IO = cpu::VecIO<scalar_t>;
    using opmath_t = typename IO::opmath_t;
    using Vec = typename IO::Vec;
    const scalar_t* sp = scores.const_data_ptr<scalar_t>();
    const bool* mp = mask.defined() ? mask.const_data_ptr<bool>() : nullptr;
    scalar_t* op = out.mutable_data_ptr<scalar_t>();
    const opmath_t scale_v = static_cast<opmath_t>(scale);
    const opmath_t neg_inf = -std::numeric_limits<opmath_t>::infinity();
    const std::int64_t grain = std::max<std::int64_t>(1, cpu::kGrainElements / tk);
    at::parallel_for(0, rows, grain, [&](std::int64_t begin, std::int64_t end) {
      std::vector<opmath_t> logits(static_cast<std::size_t>(tk));
      opmath_t* buf = logits.data();
      for (std::int64_t r = begin; r < end; ++r) {
        const scalar_t* row = sp + r * tk;
        scalar_t* dst = op + r * tk;
        std::int64_t i = 0;
        for (; i + IO::kWidth <= tk; i += IO::kWidth) (IO::load(row + i) * Vec(scale_v)).store(buf + i);
        for (; i < tk; ++i) buf[i] = static_cast<opmath_t>(row[i]) * scale_v;
        if (mp != nullptr) {
          const bool* mrow = mp + row_offset(r, mask.sizes(), mask.strides());
          for (std::int64_t j = 0; j < tk; ++j) {
            if (mrow[j]) buf[j] = neg_inf;
          }
        }
        const opmath_t max = at::vec::reduce_all<opmath_t>([](Vec a, Vec b) { return at::vec::maximum(a, b); }, buf, tk);
        if (max == neg_inf) {  // every key masked
          for (std::int64_t j = 0; j < tk; ++j) dst[j] = scalar_t(0);
          continue;
        }
        Vec acc(opmath_t(0));
        i = 0;
        for (; i + Vec::size() <= tk; i += Vec::size()) {
          const Vec e = (Vec::loadu(buf + i) - Vec(max)).exp();
          e.store(buf + i);
          acc = acc + e;
        }
        opmath_t sum = cpu::reduce_add<opmath_t>(acc);
        for (; i < tk; ++i) {
          buf[i] = std::exp(buf[i] - max);
          sum += buf[i];
        }
        const opmath_t inv = opmath_t(1) / sum;
        i = 0;
        for (; i + IO::kWidth <= tk; i += IO::kWidth) IO::store(dst + i, Vec::loadu(buf + i) * Vec(inv));
        for (; i < tk; ++i) dst[i] = static_cast<scalar_t>(buf[i] * inv);
      }
    });
  });
  return out;
}

}  // namespace crossdev::ops::scaled_masked_softmax
