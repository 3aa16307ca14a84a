#pragma once
// Internal: the data an op provides. Each op folder's op.cpp builds one OpDefinition and hands it
// to CROSSDEV_REGISTER_OP (ops/library/register_op.h), which registers its schemas and kernels
// with the PyTorch dispatcher (torch.ops.crossdev.<op>) and adds it to the op table. There is no
// other list of ops: all_ops(), the CLI, pytest, the bench and the matrices read that table.
#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ops/op_spec.h"

namespace crossdev::ops {

class InputMaker;

// Returns "" when the call satisfies the predicate, else why it does not (for the record/log).
// A check builds no string when it passes: the kernels evaluate every validity predicate on
// every call. Shape checks compare sym_sizes() (eligibility.h's helpers), so the same predicate
// validates concrete tensors and the Meta kernel's symbolic ones (torch.compile(dynamic=True),
// torch.export).
using PredicateCheck = std::function<std::string(const OpCall&)>;

// The error a failing predicate raises through the dispatcher, as ATen's TORCH_CHECK_VALUE /
// _TYPE / _INDEX / TORCH_CHECK do: Python sees ValueError, TypeError, IndexError or RuntimeError.
enum class CheckError : std::uint8_t { Value, Type, Index, Runtime };
const char* check_error_name(CheckError error) noexcept;  // "ValueError", ... (eligibility.cpp)

struct Predicate {
  std::string name;
  PredicateCheck check;
  CheckError error = CheckError::Value;  // shapes and ranges; dtypes are Type, devices Runtime
};

// The predicate lists the kernels evaluate, built once by the op table (library/op_table.cpp)
// from the definition's fields and read without locks afterwards (the fused-vs-fallback order
// stays data: these lists).
struct OpChecks {
  std::vector<Predicate> common;        // required inputs, dtypes, one device, then `validity`
  std::vector<Predicate> kernel_limits; // fused_dtype_supported, then `fused_only`
  std::vector<Predicate> fused;         // device_has_fused_kernel, then kernel_limits
};

using KernelFn = at::Tensor (*)(const OpCall&);
// One gradient per entry of OpDefinition::inputs (undefined where there is none).
using BackwardFn = std::vector<at::Tensor> (*)(const OpCall&, const at::Tensor& grad_out);

enum class InputKind : std::uint8_t { Floating, Mask };  // Mask: a bool tensor
struct InputSpec {
  const char* name;
  bool required;
  bool differentiable;
  InputKind kind = InputKind::Floating;
};

struct ShapeSet {
  const char* name;
  void (*make)(InputMaker&);
};

// Inputs of any size for the benchmark (bench/model/sized_inputs.h): `make` fills the InputMaker
// for `elements` = numel of the primary input, a positive multiple of `granule`, usually the
// "large" shape set scaled along its batch/row dimension. An op without one (make == nullptr) is
// refused by bench rows, with the list of ops that have one.
struct BenchInputs {
  std::int64_t granule = 0;
  const char* description = "";  // the shapes, for docs and error messages
  void (*make)(InputMaker& in, std::int64_t elements) = nullptr;
};

// Row width of the row-wise ops' bench inputs (as in their "large" sets), and their batch: 4 where
// the row count allows it, like the "large" sets.
inline constexpr std::int64_t kBenchRowWidth = 1024;
inline constexpr std::int64_t bench_batch_for(std::int64_t rows) { return rows % 4 == 0 ? 4 : 1; }

struct TorchScriptSpec {
  const char* source;    // the seed-style scripted function(s)
  const char* function;  // entry point
  // Positional arguments for the entry point; floating inputs are already in the opmath dtype.
  std::vector<c10::IValue> (*arguments)(const OpCall&);
};

struct OpDefinition {
  const char* name;
  // The dispatcher schema, e.g. "modulate(Tensor x, Tensor shift, Tensor scale) -> Tensor".
  // Tensor arguments are the inputs (same names as `inputs`), float arguments are scalars of the
  // call, `bool training` and `Generator? generator` are OpCall::training / OpCall::generator. The `.out` overload
  // and `<op>_backward` are derived from it (ops/library/op_schemas.h).
  const char* schema;
  // The output's shape is the broadcast of these inputs (default: the first input's shape); its
  // dtype is the first input's.
  std::vector<const char*> output_shape_from;
  std::vector<InputSpec> inputs;
  std::vector<ShapeSet> shape_sets;
  std::vector<Predicate> validity;    // every implementation: ranks, shapes, scalar ranges
  std::vector<Predicate> fused_only;  // extra limits of the fused kernels
  KernelFn fallback;
  KernelFn fused_cpu;
  KernelFn fused_cuda = nullptr;       // set only when the CUDA kernels are built
  BackwardFn fused_backward_cpu = nullptr;   // nullptr: the CPU backward is derived from the fallback
  BackwardFn fused_backward_cuda = nullptr;  // set only when the CUDA kernels are built
  TorchScriptSpec script;
  BenchInputs bench;
  // Derived, not written by op.cpp: filled by the op table when the definition is added.
  OpChecks checks;
};

std::unique_ptr<OpSpec> make_table_op(const OpDefinition& definition);  // table_op.cpp

// The op table's rows, in registration order; stable addresses.
const std::vector<const OpDefinition*>& all_definitions();
const OpDefinition* find_definition(std::string_view name);  // nullptr if unknown

}  // namespace crossdev::ops
