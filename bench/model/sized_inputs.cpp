#include "model/sized_inputs.h"

#include <c10/util/StringUtil.h>

#include "ops/input_maker.h"
#include "ops/op_definition.h"

namespace crossdev::bench {
namespace {

const ops::OpDefinition* benchable(const std::string& op) noexcept {
  const ops::OpDefinition* def = ops::find_definition(op);
  return def && def->bench.make ? def : nullptr;
}

}  // namespace

std::vector<BenchLayout> bench_layouts() {
  std::vector<BenchLayout> layouts;
  for (const ops::OpDefinition* def : ops::all_definitions()) {
    if (def->bench.make) layouts.push_back({def->name, def->bench.granule, def->bench.description});
  }
  return layouts;
}

std::optional<BenchLayout> find_bench_layout(const std::string& op) noexcept {
  const ops::OpDefinition* def = benchable(op);
  if (!def) return std::nullopt;
  return BenchLayout{def->name, def->bench.granule, def->bench.description};
}

ops::OpCall make_sized_inputs(const std::string& op, std::int64_t elements, at::ScalarType dtype,
                              c10::Device device, std::uint64_t seed) {
  const ops::OpDefinition* def = benchable(op);
  if (!def) {
    std::vector<std::string> known;
    for (const BenchLayout& layout : bench_layouts()) known.emplace_back(layout.op);
    throw std::invalid_argument("no bench layout for op '" + op + "'; expected one of: " + c10::Join(", ", known));
  }
  if (elements <= 0 || elements % def->bench.granule != 0) {
    throw std::invalid_argument(op + ": size " + std::to_string(elements) + " elements does not fit the bench layout " +
                                def->bench.description + "; expected a positive multiple of " +
                                std::to_string(def->bench.granule));
  }
  ops::InputMaker maker(op, "bench_" + std::to_string(elements), seed);
  def->bench.make(maker, elements);
  return std::move(maker).finish(dtype, device);
}

}  // namespace crossdev::bench
