#pragma once
// The broken kernels, one function per mutant, each over the same OpCall the production kernels take.
#include <ATen/core/Tensor.h>

#include <vector>

#include "ops/op_spec.h"

namespace crossdev::mutants {

using MutantKernel = at::Tensor (*)(const ops::OpCall& call);
// A broken backward: one gradient per OpDefinition::inputs entry (undefined where none).
using MutantBackward = std::vector<at::Tensor> (*)(const ops::OpCall& call, const at::Tensor& grad_out);
struct MutantRow {
  const char* name;  // "<op>.<defect>"; <op> is the operator it overrides
  const char* description;
  MutantKernel kernel;                // overrides crossdev::<op> (nullptr for a backward mutant)
  MutantBackward backward = nullptr;  // overrides crossdev::<op>_backward instead
};
const std::vector<MutantRow>& mutant_rows();

}  // namespace crossdev::mutants
