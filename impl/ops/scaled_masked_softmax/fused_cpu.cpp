// Per row of Tk keys, read in place through its strides (cpu::RowReader), with a per-task opmath
// row buffer that stays in L1/L2 for typical Tk (4 KiB at Tk = 1024 floats):
//   forward   pass 1: running max of the logits (scale * scores, masked keys blended to -inf);
//             pass 2: e = exp(logit - max) into the buffer and its sum (the logits recomputed
//             from the row, in L1); pass 3: store e / sum. A row of at most 4 whole vectors keeps
//             e in registers instead of the buffer (softmax_short_row).
//             Scores are read from memory once and the output written once.
//   backward  y recomputed the same way (zeros where masked, so fully masked rows get zero
//             gradients); dot = sum(g y); grad_scores = scale y (g - dot).
// exp is at::vec's exp_u20, the one ATen's own softmax kernel uses (vec::Vectorized, Sleef-based
// polynomial in the AVX2/AVX512 copies; libm in DEFAULT). The mask's rows follow its own
// (possibly zero) strides against the scores' shape (MaskRows), with no expanded view.
// Compiled once per instruction set (CPU_CAPABILITY, ops/cpu/dispatch.h).
#include <ATen/Dispatch.h>
#include <ATen/Functions.h>

#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "ops/cpu/dispatch.h"
#include "ops/cpu/lane_bits.h"
#include "ops/output.h"
#include "ops/cpu/rows.h"
#include "ops/scaled_masked_softmax/kernels.h"

namespace crossdev::ops::scaled_masked_softmax::CPU_CAPABILITY {
namespace {

// The logits of one row: scale * scores, -inf at masked keys (mrow null: no mask). A vector's mask
// bytes become lane bits (one byte compare, cpu/lane_bits.h) and a blend: no branch on the
// (unpredictable) mask. Each pass recomputes them from the row (in L1) rather than reading back a
// buffer it has just stored.
template <typename scalar_t>
struct RowLogits {
  CROSSDEV_VEC_IO_TYPES(scalar_t);
  static constexpr opmath_t kNegInf = -std::numeric_limits<opmath_t>::infinity();

  const scalar_t* row;
  const bool* mrow;
  opmath_t scale;

  Vec vec(std::int64_t i) const {
    const Vec v = IO::load(row + i) * Vec(scale);
    return mrow == nullptr ? v : cpu::select_lanes<opmath_t>(cpu::nonzero_bits<Vec::size()>(mrow + i), v, kNegInf);
  }
  opmath_t at(std::int64_t j) const {
    return mrow != nullptr && mrow[j] ? kNegInf : static_cast<opmath_t>(row[j]) * scale;
  }
  opmath_t max(std::int64_t tk) const {
    Vec vmax(kNegInf);
    std::int64_t i = 0;
    for (; i + IO::kWidth <= tk; i += IO::kWidth) vmax = at::vec::maximum(vmax, vec(i));
    opmath_t m = at::vec::vec_reduce_all<opmath_t>([](Vec a, Vec b) { return at::vec::maximum(a, b); }, vmax);
    for (; i < tk; ++i) m = std::max(m, at(i));
    return m;
  }
};

// Writes exp(logit - max) into buf (zeros at masked keys) and returns 1 / sum, or 0 when every key
// is masked (the row's result is then all zeros).
template <typename scalar_t, typename opmath_t = typename cpu::VecIO<scalar_t>::opmath_t>
opmath_t exp_row(const RowLogits<scalar_t>& logits, std::int64_t tk, opmath_t* buf) {
  using IO = cpu::VecIO<scalar_t>;
  using Vec = typename IO::Vec;
  const opmath_t max = logits.max(tk);
  if (max == RowLogits<scalar_t>::kNegInf) {  // every key masked (or every logit -inf)
    std::fill(buf, buf + tk, opmath_t(0));
    return opmath_t(0);
  }
  Vec acc(opmath_t(0));
  std::int64_t i = 0;
  for (; i + IO::kWidth <= tk; i += IO::kWidth) {
    const Vec e = (logits.vec(i) - Vec(max)).exp_u20();
    e.store(buf + i);
    acc = acc + e;
  }
  opmath_t sum = cpu::reduce_add<opmath_t>(acc);
  for (; i < tk; ++i) {
    buf[i] = std::exp(logits.at(i) - max);
    sum += buf[i];
  }
  return opmath_t(1) / sum;
}

// Rows of at most kShortRowVectors whole vectors (the per-call figure's Tk = 16 is one): the
// exponentials stay in registers between the passes, where a buffer written and read back at once
// cost more than the arithmetic. The same operations in the same order as exp_row followed by the
// forward's scaling loop, so both paths give the same bits.
constexpr std::int64_t kShortRowVectors = 4;

// `e` holds the row's logits (Vectors vectors) and is overwritten with its exponentials.
template <int Vectors, typename scalar_t, typename Vec>
void softmax_short_row_of(Vec* e, scalar_t* dst) {
  using IO = cpu::VecIO<scalar_t>;
  using opmath_t = typename IO::opmath_t;
  Vec vmax(RowLogits<scalar_t>::kNegInf);
  for (int k = 0; k < Vectors; ++k) vmax = at::vec::maximum(vmax, e[k]);
  const opmath_t max = at::vec::vec_reduce_all<opmath_t>([](Vec a, Vec b) { return at::vec::maximum(a, b); }, vmax);
  if (max == RowLogits<scalar_t>::kNegInf) {
    for (int k = 0; k < Vectors; ++k) IO::store(dst + k * IO::kWidth, Vec(opmath_t(0)));
    return;
  }
  Vec acc(opmath_t(0));
  for (int k = 0; k < Vectors; ++k) {
    e[k] = (e[k] - Vec(max)).exp_u20();
    acc = acc + e[k];
  }
  const opmath_t inv = opmath_t(1) / cpu::reduce_add<opmath_t>(acc);
  for (int k = 0; k < Vectors; ++k) IO::store(dst + k * IO::kWidth, e[k] * Vec(inv));
}

template <int Vectors, typename scalar_t>
void softmax_short_row(const RowLogits<scalar_t>& logits, scalar_t* dst) {
  using Vec = typename cpu::VecIO<scalar_t>::Vec;
  Vec e[Vectors];
  for (int k = 0; k < Vectors; ++k) e[k] = logits.vec(k * cpu::VecIO<scalar_t>::kWidth);
  softmax_short_row_of<Vectors>(e, dst);
}

#if defined(CPU_CAPABILITY_AVX512)
// Sixteen rows of one float vector each (Tk = 16 in float32, float16 or bfloat16: the per-call
// figure's rows), done together. A row alone spends most of its time in its two horizontal
// reductions (max, then sum: four shuffle-and-combine steps each, one after the other); here one
// transposed tree reduces all sixteen rows at once (15 combines and 30 shuffles per reduction
// instead of 64 and 64), and one division gives all sixteen reciprocals. Every row's max, sum
// and reciprocal are the same bits as softmax_short_row_of<1>'s: the tree pairs each row's lanes
// exactly as at::vec::vec_reduce_all's AVX512 float reduction does (halves of 256, 128, 64 and 32
// bits, the lower lanes first), and an IEEE division or product does not depend on the lane.
namespace sixteen_rows {

// One level of the tree over two vectors a and b: the X lanes and the Y lanes of each, combined.
// 256: X = (a.q0 a.q1 | b.q0 b.q1), Y = (a.q2 a.q3 | b.q2 b.q3) (qN: 128-bit quarter N);
// 128: X = (a.q0 a.q2 b.q0 b.q2), Y = (a.q1 a.q3 b.q1 b.q3); 64 and 32: within each quarter.
template <typename Op> __m512 level256(__m512 a, __m512 b, Op op) {
  return op(_mm512_shuffle_f32x4(a, b, 0x44), _mm512_shuffle_f32x4(a, b, 0xEE));
}
template <typename Op> __m512 level128(__m512 a, __m512 b, Op op) {
  return op(_mm512_shuffle_f32x4(a, b, 0x88), _mm512_shuffle_f32x4(a, b, 0xDD));
}
template <typename Op> __m512 level64(__m512 a, __m512 b, Op op) {
  return op(_mm512_shuffle_ps(a, b, 0x44), _mm512_shuffle_ps(a, b, 0xEE));
}
template <typename Op> __m512 level32(__m512 a, __m512 b, Op op) {
  return op(_mm512_shuffle_ps(a, b, 0x88), _mm512_shuffle_ps(a, b, 0xDD));
}

// op over the lanes of each of 16 vectors; row r's result is in lane lane_of(r).
template <typename Op>
__m512 reduce_rows(const __m512 (&v)[16], Op op) {
  __m512 halves[8], quarters[4], pairs[2];
  for (int k = 0; k < 8; ++k) halves[k] = level256(v[2 * k], v[2 * k + 1], op);          // rows 2k | 2k+1
  for (int k = 0; k < 4; ++k) quarters[k] = level128(halves[2 * k], halves[2 * k + 1], op);  // quarter i: row 4k+i
  for (int k = 0; k < 2; ++k) pairs[k] = level64(quarters[2 * k], quarters[2 * k + 1], op);
  return level32(pairs[0], pairs[1], op);  // lane 4i+j: row 4j+i
}
constexpr int lane_of(int row) { return 4 * (row % 4) + row / 4; }
inline __m512 broadcast_lane(__m512 v, int lane) { return _mm512_permutexvar_ps(_mm512_set1_epi32(lane), v); }

// `logits`: each row's logits (softmax_short_row_of<1>'s e[0]); dst: each row's output.
template <typename scalar_t>
void softmax(const __m512 (&logits)[16], scalar_t* const (&dst)[16]) {
  using Vec = at::vec::Vectorized<float>;
  using IO = cpu::VecIO<scalar_t>;
  const auto maximum = [](__m512 a, __m512 b) -> __m512 { return at::vec::maximum(Vec(a), Vec(b)); };
  const auto add = [](__m512 a, __m512 b) -> __m512 { return Vec(a) + Vec(b); };
  const __m512 row_max = reduce_rows(logits, maximum);
  const __mmask16 all_masked =
      _mm512_cmp_ps_mask(row_max, _mm512_set1_ps(RowLogits<scalar_t>::kNegInf), _CMP_EQ_OQ);  // by lane
  // The one-row path sums 0 + e before reducing; 0 + e is e's own bits (e = exp(...) is never -0),
  // so e is reduced directly.
  __m512 e[16];
#pragma GCC unroll 16
  for (int r = 0; r < 16; ++r) e[r] = (Vec(logits[r]) - Vec(broadcast_lane(row_max, lane_of(r)))).exp_u20();
  const __m512 inv = _mm512_div_ps(_mm512_set1_ps(1.0f), reduce_rows(e, add));
#pragma GCC unroll 16
  for (int r = 0; r < 16; ++r) {
    const bool masked = (all_masked >> lane_of(r)) & 1;
    IO::store(dst[r], masked ? Vec(0.0f) : Vec(e[r]) * Vec(broadcast_lane(inv, lane_of(r))));
  }
}

}  // namespace sixteen_rows

// Whether rows of scalar_t are one vector of 16 floats when they have 16 keys.
template <typename scalar_t>
constexpr bool kSixteenRows =
    std::is_same_v<typename cpu::VecIO<scalar_t>::opmath_t, float> && cpu::VecIO<scalar_t>::kWidth == 16;
#endif

template <typename scalar_t>
void softmax_short_row(const RowLogits<scalar_t>& logits, std::int64_t vectors, scalar_t* dst) {
  switch (vectors) {
    case 1: return softmax_short_row<1>(logits, dst);
    case 2: return softmax_short_row<2>(logits, dst);
    case 3: return softmax_short_row<3>(logits, dst);
    default: return softmax_short_row<4>(logits, dst);
  }
}

// The mask's rows, read against the scores' rows without an expanded view (which cost a view per
// call) and without a division per dimension per row (which, at the per-call size's 64 rows of 16
// keys, cost more than the softmax): the mask's sizes and strides aligned right to the scores'
// leading dims (stride 0 where the mask broadcasts), size-1 dims dropped and adjacent dims merged
// where one stride steps through both. A task finds its first row with one division per dim, then
// steps an odometer (Cursor::next). More than kMaxDims dims left after merging (unusual ranks):
// the expanded view and cpu::RowReader, as before.
class MaskRows {
 public:
  static constexpr int kMaxDims = 16;

  MaskRows(const at::Tensor& mask, at::IntArrayRef scores)
      : base_(mask.const_data_ptr<bool>()),
        length_(scores.empty() ? 1 : scores.back()),
        inner_stride_(mask.dim() == 0 || mask.size(-1) == 1 ? 0 : mask.stride(-1)) {
    const std::int64_t nd = static_cast<std::int64_t>(scores.size());
    const std::int64_t lead = nd - mask.dim();  // the scores' dims the mask lacks (broadcast)
    for (std::int64_t k = 0; k + 1 < nd; ++k) {
      const std::int64_t size = scores[k];
      if (size == 1) continue;
      const std::int64_t mk = k - lead;
      const std::int64_t stride = mk < 0 || mask.size(mk) == 1 ? 0 : mask.stride(mk);
      if (dims_ > 0 && strides_[dims_ - 1] == stride * size) {  // the outer dim steps through this one
        sizes_[dims_ - 1] *= size;
        strides_[dims_ - 1] = stride;
        continue;
      }
      if (dims_ == kMaxDims) {
        reader_.emplace(expanded_ = mask.expand(scores));
        return;
      }
      sizes_[dims_] = size;
      strides_[dims_] = stride;
      ++dims_;
    }
  }

  bool rows_contiguous() const { return inner_stride_ == 1 || length_ <= 1; }

  // Row r, r + 1, ... of one task's range, each as adjacent bools (in place or gathered into scratch).
  class Cursor {
   public:
    Cursor(const MaskRows& rows, std::int64_t r) : rows_(rows), r_(r) {
      for (int k = rows.dims_ - 1; k >= 0; --k) {
        index_[k] = r % rows.sizes_[k];
        offset_ += index_[k] * rows.strides_[k];
        r /= rows.sizes_[k];
      }
    }
    const bool* row(bool* scratch) const {
      if (rows_.reader_) return rows_.reader_->row(r_, scratch);
      const bool* p = rows_.base_ + offset_;
      if (rows_.rows_contiguous()) return p;
      for (std::int64_t i = 0; i < rows_.length_; ++i) scratch[i] = p[i * rows_.inner_stride_];
      return scratch;
    }
    void next() {
      ++r_;
      for (int k = rows_.dims_ - 1; k >= 0; --k) {
        offset_ += rows_.strides_[k];
        if (++index_[k] < rows_.sizes_[k]) return;
        offset_ -= index_[k] * rows_.strides_[k];
        index_[k] = 0;
      }
    }

   private:
    const MaskRows& rows_;
    std::int64_t r_;
    std::int64_t offset_ = 0;
    std::array<std::int64_t, kMaxDims> index_{};
  };

 private:
  const bool* base_;
  std::int64_t length_;
  std::int64_t inner_stride_;
  int dims_ = 0;
  std::array<std::int64_t, kMaxDims> sizes_{}, strides_{};
  at::Tensor expanded_;                          // only past kMaxDims
  std::optional<cpu::RowReader<bool>> reader_;   // over expanded_
};

// Rows [begin, end) of 16 keys, sixteen at a time (sixteen_rows::softmax), the rest one at a time;
// false (nothing done) where rows of scalar_t are not one vector of 16 floats or not on AVX512.
template <typename scalar_t>
bool softmax_rows_by_sixteen(const cpu::RowReader<scalar_t>& sr, std::optional<MaskRows::Cursor>& mask_row,
                             bool* mask_scratch, scalar_t* scratch, float scale, std::int64_t begin, std::int64_t end,
                             scalar_t* out) {
#if defined(CPU_CAPABILITY_AVX512)
  if constexpr (kSixteenRows<scalar_t>) {
    using Vec = at::vec::Vectorized<float>;
    __m512 logits[16];
    scalar_t* dst[16];
    int staged = 0;
    for (std::int64_t r = begin; r < end; ++r) {
      const bool* mrow = nullptr;
      if (mask_row) {
        if (r > begin) mask_row->next();
        mrow = mask_row->row(mask_scratch);
      }
      logits[staged] = RowLogits<scalar_t>{sr.row(r, scratch), mrow, scale}.vec(0);
      dst[staged] = out + r * 16;
      if (++staged == 16) {
        sixteen_rows::softmax(logits, dst);
        staged = 0;
      }
    }
    for (int k = 0; k < staged; ++k) {  // the range's last rows
      Vec e[1] = {Vec(logits[k])};
      softmax_short_row_of<1>(e, dst[k]);
    }
    return true;
  }
#endif
  (void)sr, (void)mask_row, (void)mask_scratch, (void)scratch, (void)scale, (void)begin, (void)end, (void)out;
  return false;
}

struct Rows {
  at::Tensor scores;
  std::optional<MaskRows> mask;  // nullopt: no mask
  std::int64_t tk = 0;
  std::int64_t rows = 0;
};

Rows rows_of(const OpCall& call) {
  Rows r;
  r.scores = call.tensor("scores");
  const at::Tensor& mask = call.tensor("mask");
  if (mask.defined()) r.mask.emplace(mask, r.scores.sizes());
  r.tk = r.scores.size(-1);
  r.rows = r.tk == 0 ? 0 : r.scores.numel() / r.tk;
  return r;
}

at::Tensor forward(const OpCall& call) {
  const Rows in = rows_of(call);
  at::Tensor out = output_for(call, in.scores.sizes(), in.scores.options());
  if (in.rows == 0) return out;
  const double scale = call.scalar("scale", 1.0);

  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, in.scores.scalar_type(), "scaled_masked_softmax_fused_cpu", [&] {
    CROSSDEV_VEC_IO_TYPES(scalar_t);
    const cpu::RowReader<scalar_t> sr(in.scores);
    const std::optional<MaskRows>& mr = in.mask;
    scalar_t* op = out.mutable_data_ptr<scalar_t>();
    const std::int64_t tk = in.tk;
    const bool short_rows = tk % IO::kWidth == 0 && tk / IO::kWidth <= kShortRowVectors;
    cpu::parallel_row_ranges(in.rows, tk, [&](std::int64_t begin, std::int64_t end) {
      std::vector<opmath_t> buffer(short_rows ? 0 : static_cast<std::size_t>(tk));
      std::vector<scalar_t> scratch = cpu::scratch_for<scalar_t>(tk, !sr.rows_contiguous());
      std::vector<char> mask_scratch(mr && !mr->rows_contiguous() ? static_cast<std::size_t>(tk) : 0);
      opmath_t* buf = buffer.data();
      std::optional<MaskRows::Cursor> mask_row;
      if (mr) mask_row.emplace(*mr, begin);
      if (tk == 16 && softmax_rows_by_sixteen<scalar_t>(sr, mask_row, reinterpret_cast<bool*>(mask_scratch.data()),
                                                         scratch.data(), static_cast<opmath_t>(scale), begin, end, op)) {
        return;
      }
      for (std::int64_t r = begin; r < end; ++r) {
        const bool* mrow = nullptr;
        if (mask_row) {
          if (r > begin) mask_row->next();
          mrow = mask_row->row(reinterpret_cast<bool*>(mask_scratch.data()));
        }
        const RowLogits<scalar_t> logits{sr.row(r, scratch.data()), mrow, static_cast<opmath_t>(scale)};
        scalar_t* dst = op + r * tk;
        if (short_rows) {
          softmax_short_row(logits, tk / IO::kWidth, dst);
          continue;
        }
        const opmath_t inv = exp_row(logits, tk, buf);
        std::int64_t i = 0;
        for (; i + IO::kWidth <= tk; i += IO::kWidth) IO::store(dst + i, Vec::loadu(buf + i) * Vec(inv));
        for (; i < tk; ++i) dst[i] = static_cast<scalar_t>(buf[i] * inv);
      }
    });
  });
  return out;
}

std::vector<at::Tensor> backward(const OpCall& call, const at::Tensor& grad_out) {
  const Rows in = rows_of(call);
  at::Tensor grad = at::empty(in.scores.sizes(), in.scores.options().memory_format(at::MemoryFormat::Contiguous));
  if (in.rows == 0) return {grad, at::Tensor()};
  const double scale = call.scalar("scale", 1.0);

  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, in.scores.scalar_type(), "scaled_masked_softmax_backward_cpu", [&] {
    CROSSDEV_VEC_IO_TYPES(scalar_t);
    const cpu::RowReader<scalar_t> sr(in.scores), gr(grad_out);
    const std::optional<MaskRows>& mr = in.mask;
    scalar_t* op = grad.mutable_data_ptr<scalar_t>();
    const std::int64_t tk = in.tk;
    const opmath_t scale_v = static_cast<opmath_t>(scale);
    cpu::parallel_row_ranges(in.rows, tk, [&](std::int64_t begin, std::int64_t end) {
      std::vector<opmath_t> buffer(static_cast<std::size_t>(tk));
      std::vector<scalar_t> scratch = cpu::scratch_for<scalar_t>(tk, !sr.rows_contiguous());
      std::vector<scalar_t> g_scratch = cpu::scratch_for<scalar_t>(tk, !gr.rows_contiguous());
      std::vector<char> mask_scratch(mr && !mr->rows_contiguous() ? static_cast<std::size_t>(tk) : 0);
      opmath_t* buf = buffer.data();
      std::optional<MaskRows::Cursor> mask_row;
      if (mr) mask_row.emplace(*mr, begin);
      for (std::int64_t r = begin; r < end; ++r) {
        const bool* mrow = nullptr;
        if (mask_row) {
          if (r > begin) mask_row->next();
          mrow = mask_row->row(reinterpret_cast<bool*>(mask_scratch.data()));
        }
        const opmath_t inv = exp_row(RowLogits<scalar_t>{sr.row(r, scratch.data()), mrow, scale_v}, tk, buf);
        const scalar_t* g = gr.row(r, g_scratch.data());
        // y = e * inv in place; dot = sum(g y)
        Vec acc(opmath_t(0));
        std::int64_t i = 0;
        for (; i + IO::kWidth <= tk; i += IO::kWidth) {
          const Vec y = Vec::loadu(buf + i) * Vec(inv);
          y.store(buf + i);
          acc = at::vec::fmadd(IO::load(g + i), y, acc);
        }
        opmath_t dot = cpu::reduce_add<opmath_t>(acc);
        for (; i < tk; ++i) {
          buf[i] *= inv;
          dot += static_cast<opmath_t>(g[i]) * buf[i];
        }
        scalar_t* dst = op + r * tk;
        i = 0;
        for (; i + IO::kWidth <= tk; i += IO::kWidth) {
          IO::store(dst + i, Vec(scale_v) * Vec::loadu(buf + i) * (IO::load(g + i) - Vec(dot)));
        }
        for (; i < tk; ++i) dst[i] = static_cast<scalar_t>(scale_v * buf[i] * (static_cast<opmath_t>(g[i]) - dot));
      }
    });
  });
  return {grad, at::Tensor()};
}

}  // namespace
}  // namespace crossdev::ops::scaled_masked_softmax::CPU_CAPABILITY

CROSSDEV_REGISTER_CPU_KERNELS(scaled_masked_softmax, &forward, &backward)
