#include "sim/diverging_ops.h"

#include <c10/util/Exception.h>

#include "sim/diverging_steps.h"

namespace crossdev::sim {

const char* difference_name(Difference d) noexcept {
  switch (d) {
    case Difference::FactorPhases: return "factor_phases";
    case Difference::CudaShapedStats: return "cuda_shaped_stats";
    case Difference::Tf32Operands: return "tf32_operands";
    case Difference::ReductionOrder: return "reduction_order";
    case Difference::BlockedScan: return "blocked_scan";
  }
  return "unknown";
}

// The one table. Structured ops reach sim as their out= overload (their functional variant is a
// CompositeExplicitAutogradNonFunctional wrapper), so those overloads are listed; linalg_eig, addbmm
// and the batch norms reach it under their own names. Composite callers (linalg_eigh, linalg_svd, svd,
// matmul, linear, softmax, layer_norm's batch norm, torch.norm, ...) reach these.
const std::vector<DivergingOp>& diverging_ops() {
  using D = Difference;
  static const std::vector<DivergingOp> kTable = {
      {"aten::_linalg_eigh", "eigenvalues", D::FactorPhases, nullptr, &steps::eigh_vectors},
      {"aten::linalg_eig", "", D::FactorPhases, nullptr, &steps::eig_vectors},
      {"aten::linalg_eig", "out", D::FactorPhases, nullptr, &steps::eig_vectors},
      {"aten::_linalg_svd", "U", D::FactorPhases, nullptr, &steps::svd_vectors},
      {"aten::linalg_qr", "out", D::FactorPhases, nullptr, &steps::qr_factors},
      {"aten::native_batch_norm", "", D::CudaShapedStats, nullptr, &steps::batch_norm_stats},
      {"aten::_native_batch_norm_legit", "", D::CudaShapedStats, nullptr, &steps::batch_norm_stats},
      {"aten::_native_batch_norm_legit", "no_stats", D::CudaShapedStats, nullptr, &steps::batch_norm_stats},
      {"aten::native_batch_norm_backward", "", D::CudaShapedStats, &steps::batch_norm_backward_stats, nullptr},
      {"aten::native_layer_norm_backward", "", D::CudaShapedStats, &steps::layer_norm_backward_stats, nullptr},
      {"aten::mm", "out", D::Tf32Operands, &steps::tf32_gemm_operands, nullptr},
      {"aten::bmm", "out", D::Tf32Operands, &steps::tf32_gemm_operands, nullptr},
      {"aten::addmm", "out", D::Tf32Operands, &steps::tf32_gemm_operands, nullptr},
      {"aten::baddbmm", "out", D::Tf32Operands, &steps::tf32_gemm_operands, nullptr},
      {"aten::addbmm", "", D::Tf32Operands, &steps::tf32_gemm_operands, nullptr},
      {"aten::addbmm", "out", D::Tf32Operands, &steps::tf32_gemm_operands, nullptr},
      {"aten::sum", "IntList_out", D::ReductionOrder, &steps::reorder_reduced_dims, nullptr},
      {"aten::linalg_vector_norm", "out", D::ReductionOrder, &steps::reorder_reduced_dims, nullptr},
      {"aten::norm", "out", D::ReductionOrder, &steps::reorder_reduced_dims, nullptr},
      {"aten::norm", "dtype_out", D::ReductionOrder, &steps::reorder_reduced_dims, nullptr},
      {"aten::_softmax", "out", D::ReductionOrder, &steps::reorder_softmax_dim, &steps::restore_softmax_dim},
      {"aten::_log_softmax", "out", D::ReductionOrder, &steps::reorder_softmax_dim, &steps::restore_softmax_dim},
      {"aten::cumsum", "out", D::BlockedScan, nullptr, &steps::blocked_cumsum},
  };
  return kTable;
}

const DivergingOp* find_diverging_op(const c10::OperatorName& op) {
  for (const auto& entry : diverging_ops())
    if (entry.op == op.name && entry.overload == op.overload_name) return &entry;
  return nullptr;
}

std::size_t OpCall::index(std::string_view name) const {
  const auto& args = schema.arguments();
  for (std::size_t i = 0; i < args.size(); ++i)
    if (args[i].name() == name) return i;
  return args.size();
}

const c10::IValue& OpCall::arg(std::string_view name) const {
  const std::size_t i = index(name);
  TORCH_INTERNAL_ASSERT(i < args.size(), "sim divergence: ", schema.name(), " has no argument '", std::string(name), "'");
  return args[i];
}

DivergentCall::DivergentCall(const SimConfig& config, const c10::FunctionSchema& schema, torch::jit::Stack& stack)
    : config_(config), call_{schema, {}} {
  if (!config.diverge) return;
  entry_ = find_diverging_op(schema.operator_name());
  if (entry_ == nullptr) return;
  const std::size_t base = stack.size() - schema.arguments().size();
  call_.args.assign(stack.begin() + static_cast<std::ptrdiff_t>(base), stack.end());
  if (entry_->before != nullptr) entry_->before(call_, config_, stack, base);
}

void DivergentCall::after(torch::jit::Stack& stack) const {
  if (entry_ == nullptr || entry_->after == nullptr) return;
  entry_->after(call_, config_, stack, stack.size() - call_.schema.returns().size());
}

}  // namespace crossdev::sim
