#include "model/sized_inputs.h"

#include <algorithm>

#include "ops/input_maker.h"

namespace crossdev::bench {
namespace {

using ops::InputMaker;
using Make = void (*)(InputMaker&, std::int64_t elements);

constexpr std::int64_t kD = 1024;  // row width of the row-wise ops, as in their "large" sets

// Batch of 4 where the row count allows it, like the "large" shape sets.
std::int64_t batch_for(std::int64_t rows) { return rows % 4 == 0 ? 4 : 1; }

void modulate(InputMaker& in, std::int64_t n) {
  const std::int64_t rows = n / kD, b = batch_for(rows);
  in.uniform("x", {b, rows / b, kD});
  in.uniform("shift", {b, kD});
  in.uniform("scale", {b, kD}, -0.5, 0.5);
}

void bias_dropout_add_scale(InputMaker& in, std::int64_t n) {
  const std::int64_t rows = n / kD, b = batch_for(rows);
  in.uniform("x", {b, rows / b, kD});
  in.uniform("bias", {kD});
  in.uniform("scale", {kD}, 0.5, 1.5);
  in.uniform("residual", {b, rows / b, kD});
  in.scalar("p", 0.1);
  in.training(true);
}

void rms_norm(InputMaker& in, std::int64_t n) {
  const std::int64_t rows = n / kD, b = batch_for(rows);
  in.uniform("x", {b, rows / b, kD});
  in.scale_rows_by_powers_of_two("x", 10);
  in.uniform("weight", {kD}, 0.5, 1.5);
  in.scalar("eps", 1e-5);
}

void layer_norm_modulate(InputMaker& in, std::int64_t n) {
  const std::int64_t rows = n / kD, b = batch_for(rows);
  in.uniform("x", {b, rows / b, kD}, -2.0, 2.0);
  in.uniform("shift", {b, kD});
  in.uniform("scale", {b, kD}, -0.5, 0.5);
  in.scalar("eps", 1e-5);
}

void gelu_tanh(InputMaker& in, std::int64_t n) { in.uniform("x", {n / kD, kD}, -4.0, 4.0); }

void swiglu(InputMaker& in, std::int64_t n) {
  in.uniform("gate", {n / kD, kD}, -4.0, 4.0);
  in.uniform("up", {n / kD, kD});
}

// x[B, T, H=8, Dh=128], tables [T, Dh].
void rotary(InputMaker& in, std::int64_t n) {
  const std::int64_t rows = n / kD, b = batch_for(rows), t = rows / b;
  in.uniform("x", {b, t, 8, 128});
  in.uniform("cos", {t, 128});
  in.uniform("sin", {t, 128});
}

// scores[B, H=8, Q=128, K=256], mask[B, 1, Q, K] with 30% masked.
void scaled_masked_softmax(InputMaker& in, std::int64_t n) {
  const std::int64_t b = n / (8 * 128 * 256);
  in.uniform("scores", {b, 8, 128, 256}, -4.0, 4.0);
  in.mask("mask", {b, 1, 128, 256}, 0.3);
  in.scalar("scale", 0.35);
}

struct LayoutRow {
  BenchLayout layout;
  Make make;
};

const std::vector<LayoutRow>& layout_table() {
  static const std::vector<LayoutRow> table = {
      {{"modulate", kD, "x[B, T, 1024], shift/scale[B, 1024]"}, modulate},
      {{"bias_dropout_add_scale", kD, "x/residual[B, T, 1024], bias/scale[1024], p=0.1, training"},
       bias_dropout_add_scale},
      {{"rms_norm", kD, "x[B, T, 1024], weight[1024], eps=1e-5"}, rms_norm},
      {{"layer_norm_modulate", kD, "x[B, T, 1024], shift/scale[B, 1024], eps=1e-5"}, layer_norm_modulate},
      {{"gelu_tanh", kD, "x[N/1024, 1024]"}, gelu_tanh},
      {{"swiglu", kD, "gate/up[N/1024, 1024]"}, swiglu},
      {{"rotary", kD, "x[B, T, 8, 128], cos/sin[T, 128]"}, rotary},
      {{"scaled_masked_softmax", 8 * 128 * 256, "scores[B, 8, 128, 256], mask[B, 1, 128, 256], scale=0.35"},
       scaled_masked_softmax},
  };
  return table;
}

const LayoutRow* find_row(const std::string& op) noexcept {
  for (const LayoutRow& row : layout_table()) {
    if (op == row.layout.op) return &row;
  }
  return nullptr;
}

}  // namespace

const std::vector<BenchLayout>& bench_layouts() {
  static const std::vector<BenchLayout> layouts = [] {
    std::vector<BenchLayout> out;
    for (const LayoutRow& row : layout_table()) out.push_back(row.layout);
    return out;
  }();
  return layouts;
}

const BenchLayout* find_bench_layout(const std::string& op) noexcept {
  const LayoutRow* row = find_row(op);
  return row ? &row->layout : nullptr;
}

ops::OpCall make_sized_inputs(const std::string& op, std::int64_t elements, at::ScalarType dtype,
                              c10::Device device, std::uint64_t seed) {
  const LayoutRow* row = find_row(op);
  if (!row) {
    std::string known;
    for (const LayoutRow& r : layout_table()) known += (known.empty() ? "" : ", ") + std::string(r.layout.op);
    throw std::invalid_argument("no bench layout for op '" + op + "'; expected one of: " + known);
  }
  if (elements <= 0 || elements % row->layout.granule != 0) {
    throw std::invalid_argument(op + ": size " + std::to_string(elements) + " elements does not fit the bench layout " +
                                row->layout.description + "; expected a positive multiple of " +
                                std::to_string(row->layout.granule));
  }
  InputMaker maker(op, "bench_" + std::to_string(elements), seed);
  row->make(maker, elements);
  return std::move(maker).finish(dtype, device);
}

}  // namespace crossdev::bench
