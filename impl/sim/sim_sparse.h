#pragma once
// Sparse layouts on sim (docs/sim-backend.md, "Sparse layouts"): the constructor and structure
// kernels for SparsePrivateUse1 (COO) and SparseCsrPrivateUse1 (CSR, CSC, BSR, BSC), ATen's own
// layout-generic native kernels (a SparseTensorImpl or SparseCsrTensorImpl whose indices and values
// are sim tensors), and the CPU delegation for every other op of a sparse (COO)
// or compressed (CSR, CSC, BSR, BSC) sim tensor: the CPU's sparse kernels run on the arguments moved
// to the CPU, as the strided fallback does (sim_cpu_delegate.h), so such a case is cpu_fallback.
#include <torch/library.h>

namespace crossdev::sim {

// Registers the kernels into `sparse` ("aten", SparsePrivateUse1) and `compressed` ("aten",
// SparseCsrPrivateUse1), and the fallbacks into `sparse_fallback` and `compressed_fallback` (library
// "_", the same two keys).
void register_sparse_kernels(torch::Library& sparse, torch::Library& compressed, torch::Library& sparse_fallback,
                             torch::Library& compressed_fallback);

}  // namespace crossdev::sim
