#pragma once
// The steps of diverging_ops.cpp's table, one file per kind of difference:
// divergent_factors.cpp, divergent_stats.cpp, divergent_reductions.cpp (and numerics.cpp for TF32).
#include "sim/diverging_ops.h"

namespace crossdev::sim::steps {

// FactorPhases (after): odd-numbered columns (and the matching rows of R or Vh) times -1, or i for
// complex eigen and singular vectors.
void eigh_vectors(const OpCall&, const SimConfig&, torch::jit::Stack&, std::size_t);
void eig_vectors(const OpCall&, const SimConfig&, torch::jit::Stack&, std::size_t);
void svd_vectors(const OpCall&, const SimConfig&, torch::jit::Stack&, std::size_t);
void qr_factors(const OpCall&, const SimConfig&, torch::jit::Stack&, std::size_t);

// CudaShapedStats (after the forward; before the backward, which takes the CPU forward's dtype).
void batch_norm_stats(const OpCall&, const SimConfig&, torch::jit::Stack&, std::size_t);
void batch_norm_backward_stats(const OpCall&, const SimConfig&, torch::jit::Stack&, std::size_t);
void layer_norm_backward_stats(const OpCall&, const SimConfig&, torch::jit::Stack&, std::size_t);

// Tf32Operands (before).
void tf32_gemm_operands(const OpCall&, const SimConfig&, torch::jit::Stack&, std::size_t);

// ReductionOrder: `self` reversed and rotated by one along `dim` (before); softmax's output put back (after).
void reorder_reduced_dims(const OpCall&, const SimConfig&, torch::jit::Stack&, std::size_t);
void reorder_softmax_dim(const OpCall&, const SimConfig&, torch::jit::Stack&, std::size_t);
void restore_softmax_dim(const OpCall&, const SimConfig&, torch::jit::Stack&, std::size_t);

// BlockedScan (after).
void blocked_cumsum(const OpCall&, const SimConfig&, torch::jit::Stack&, std::size_t);

// Shared helpers: a fresh sim tensor holding a CPU tensor's values (no dispatcher op on sim but empty).
at::Tensor sim_copy_of(const at::Tensor& host, const at::Tensor& like_device);

}  // namespace crossdev::sim::steps
