#pragma once
// The broken kernels, one function per mutant, each over the same OpCall the production kernels take.
#include <ATen/core/Tensor.h>

#include <vector>

#include "ops/op_registry.h"

namespace crossdev::mutants {

using MutantKernel = at::Tensor (*)(const ops::OpCall& call);
struct MutantRow {
  const char* name;  // "<op>.<defect>"; <op> is the operator it overrides
  const char* description;
  MutantKernel kernel;
};
const std::vector<MutantRow>& mutant_rows();

}  // namespace crossdev::mutants
