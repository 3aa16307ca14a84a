#pragma once
// Internal: the data an op provides to become a row of the op table. TableOp (table_op.cpp)
// turns one OpDefinition into an OpSpec; adding an op = one definition + one row in all_ops().
#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ops/op_registry.h"

namespace crossdev::ops {

class InputMaker;

// Returns "" when the call satisfies the predicate, else why it does not (for the record/log).
using PredicateCheck = std::function<std::string(const OpCall&)>;
struct Predicate {
  std::string name;
  PredicateCheck check;
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

struct TorchScriptSpec {
  const char* source;    // the seed-style scripted function(s)
  const char* function;  // entry point
  // Positional arguments for the entry point; floating inputs are already in the opmath dtype.
  std::vector<c10::IValue> (*arguments)(const OpCall&);
};

struct OpDefinition {
  const char* name;
  std::vector<InputSpec> inputs;
  std::vector<ShapeSet> shape_sets;
  std::vector<Predicate> validity;    // every implementation: ranks, shapes, scalar ranges
  std::vector<Predicate> fused_only;  // extra limits of the fused kernels
  KernelFn fallback;
  KernelFn fused_cpu;
  KernelFn fused_cuda = nullptr;       // set only when the CUDA kernels are built
  BackwardFn fused_backward_cpu = nullptr;  // nullptr (or not on the CPU): backward derived from the fallback
  TorchScriptSpec script;
};

std::unique_ptr<OpSpec> make_table_op(OpDefinition definition);

// One function per op folder (<op>/op.cpp).
OpDefinition modulate_definition();
OpDefinition bias_dropout_add_scale_definition();
OpDefinition rms_norm_definition();
OpDefinition layer_norm_modulate_definition();
OpDefinition gelu_tanh_definition();
OpDefinition swiglu_definition();
OpDefinition rotary_definition();
OpDefinition scaled_masked_softmax_definition();

}  // namespace crossdev::ops
