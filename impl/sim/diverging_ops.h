#pragma once
// Where sim, with the divergence switch on (divergence_switch.h), differs from the CPU: ONE table of the
// overridden ops (diverging_ops.cpp) and which difference each applies. Every difference is one a
// correct device may return, and each applies below autograd (inside sim's CPU delegation, on the
// overload that reaches PrivateUse1), so the derivative formulas run on the results as they would on
// a real device's:
//   FactorPhases     eigenvectors, singular vectors and Q/R factors with other signs (phases for complex)
//   CudaShapedStats  batch norm's save_mean/save_invstd as CUDA returns them: (C,) in eval, accumulate dtype
//   Tf32Operands     float32 GEMM operands rounded to TF32 when PyTorch's TF32 flag for the kind is set
//   ReductionOrder   sums, softmax and norms reduce the input reversed and rotated along the reduced dims
//   BlockedScan      cumsum in blocks of 16, each block's prefix added to the next
// (The random stream is the sim generator's, sim_generator.cpp; convolution's TF32 is native_kernels.cpp's.)
#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>
#include <ATen/core/stack.h>

#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/sim_config.h"

namespace crossdev::sim {

enum class Difference : std::uint8_t { FactorPhases, CudaShapedStats, Tf32Operands, ReductionOrder, BlockedScan };
const char* difference_name(Difference d) noexcept;

// An op call as it reached the delegation: its schema and its arguments before any step changed them.
struct OpCall {
  const c10::FunctionSchema& schema;
  std::vector<c10::IValue> args;
  const c10::IValue& arg(std::string_view name) const;  // c10::Error when the schema has no such argument
  std::size_t index(std::string_view name) const;        // its position, or args.size() when absent
};

// A step before the CPU kernel (changes the arguments on the stack, which hold the call's arguments from
// `base`) or after it (changes the returns, which the stack then holds from `base`).
using Step = void (*)(const OpCall& call, const SimConfig& config, torch::jit::Stack& stack, std::size_t base);

struct DivergingOp {
  std::string_view op;        // "aten::_linalg_eigh"
  std::string_view overload;  // the overload that reaches sim's delegation ("" for the default)
  Difference difference;
  Step before;                // nullptr: none
  Step after;                 // nullptr: none
};

const std::vector<DivergingOp>& diverging_ops();
const DivergingOp* find_diverging_op(const c10::OperatorName& op);

// What the CPU delegation calls around the CPU kernel. Inactive (and free) when the switch is off or
// the op is not in the table.
class DivergentCall {
 public:
  DivergentCall(const SimConfig& config, const c10::FunctionSchema& schema, torch::jit::Stack& stack);
  void after(torch::jit::Stack& stack) const;

 private:
  const SimConfig& config_;
  const DivergingOp* entry_ = nullptr;
  OpCall call_;
};

}  // namespace crossdev::sim
