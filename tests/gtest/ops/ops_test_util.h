#pragma once
// Small helpers for the ops tests: the parity comparator with torch.testing's default
// tolerances, dtype names from the core table, and the (op, dtype, shape set) grid.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ops/op_spec.h"
#include "parity/comparator.h"
#include "util/dtype_names.h"

namespace crossdev::ops::testing {

using parity::default_tolerance;
using parity::Tolerance;

// The parity harness's comparator (torch.testing.assert_close semantics, non-finite values
// included). Returns "" when close, else its reason and metrics.
inline std::string close_mismatch(const at::Tensor& actual, const at::Tensor& expected, Tolerance tol) {
  parity::CompareOptions options;
  options.tolerance = tol;
  const parity::Comparison c = parity::compare(actual.detach(), expected.detach(), options);
  return c.pass ? std::string() : c.reason + " (" + c.summary() + ")";
}

inline std::vector<at::ScalarType> all_dtypes() { return {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16}; }


// One (op, shape set); tests loop over the dtypes inside (SCOPED_TRACE names the dtype), which
// keeps the CTest process count, and so LibTorch start-ups, down.
struct OpCase {
  std::string op;
  std::string shape_set;
};

inline void PrintTo(const OpCase& c, std::ostream* os) { *os << c.op << "/" << c.shape_set; }

inline std::vector<OpCase> all_cases(bool include_large) {
  std::vector<OpCase> cases;
  for (const OpSpec* op : all_ops()) {
    for (const std::string& set : op->shape_sets()) {
      if (!include_large && set == "large") continue;
      cases.push_back({op->name(), set});
    }
  }
  return cases;
}

inline std::string case_name(const ::testing::TestParamInfo<OpCase>& info) {
  return info.param.op + "_" + info.param.shape_set;
}

// Forward of `impl` with grad-requiring copies of the op's differentiable inputs; returns
// (output, leaves by input name).
inline std::pair<at::Tensor, std::map<std::string, at::Tensor>> forward_with_leaves(const OpSpec& op, Impl impl,
                                                                                    const OpCall& call) {
  OpCall leaf_call = call;
  std::map<std::string, at::Tensor> leaves;
  for (const std::string& name : op.grad_inputs()) {
    if (!call.has_tensor(name)) continue;
    leaves[name] = call.tensor(name).detach().clone().requires_grad_(true);
    leaf_call.tensors[name] = leaves[name];
  }
  return {op.run(impl, leaf_call), leaves};
}

}  // namespace crossdev::ops::testing
