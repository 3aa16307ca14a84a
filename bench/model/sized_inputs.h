#pragma once
// Benchmark inputs of any size from the ops' portable generator (impl/ops/input_maker.h).
//
// The ops' conformance shape sets stop at "large" (~1M elements); the bench needs 8M and more.
// Each op's bench layout is its OpDefinition::bench (in the op's own op.cpp), usually the "large"
// shape set scaled along the batch / row dimension, built with the same InputMaker under the
// shape-set key "bench_<elements>", so the C++ bench and the torch.compile peer (through
// crossdev.bench.make_inputs) get identical bits on every runner.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ops/op_spec.h"

namespace crossdev::bench {

struct BenchLayout {
  const char* op;
  std::int64_t granule;     // `elements` must be a positive multiple of this
  const char* description;  // the shapes, for docs and error messages
};

// One row per op that has a bench layout, in registration order. Read from the op table on each
// call, so ops a library registers later (--load-library) are included.
std::vector<BenchLayout> bench_layouts();
std::optional<BenchLayout> find_bench_layout(const std::string& op) noexcept;

// `elements` = numel of the op's primary input/output. Throws std::invalid_argument naming the
// op, the size and the granule when the size does not fit the layout, or an unknown op.
ops::OpCall make_sized_inputs(const std::string& op, std::int64_t elements, at::ScalarType dtype,
                              c10::Device device, std::uint64_t seed = 0);

}  // namespace crossdev::bench
