#include "sim/sim_sparse.h"

#include <ATen/NativeFunctions.h>

#include "sim/sim_cpu_delegate.h"

namespace crossdev::sim {

void register_sparse_kernels(torch::Library& sparse, torch::Library& compressed, torch::Library& sparse_fallback,
                             torch::Library& compressed_fallback) {
  // The constructors every COO factory reaches, and the queries of a SparseTensorImpl's own metadata:
  // what PyTorch's CPU and CUDA register for SparseCPU/SparseCUDA, layout-generic. They must be
  // kernels: through the fallback they would move a sim sparse tensor to the CPU, i.e. build one.
  sparse.impl("_sparse_coo_tensor_with_dims", at::native::new_with_dims_sparse);
  sparse.impl("_sparse_coo_tensor_with_dims_and_tensors", at::native::new_with_dims_and_tensor_sparse_symint);
  sparse.impl("empty.memory_format", at::native::empty_sparse);
  sparse.impl("sparse_dim", at::native::sparse_dim_sparse);
  sparse.impl("dense_dim", at::native::dense_dim_sparse);
  sparse.impl("_dimI", at::native::sparse_dim_sparse);
  sparse.impl("_dimV", at::native::dense_dim_sparse);
  sparse.impl("_nnz", at::native::_nnz_sparse);
  sparse.impl("is_coalesced", at::native::is_coalesced_sparse);
  sparse.impl("_coalesced_", at::native::_coalesced_sparse_);
  sparse.impl("_indices", at::native::_indices_sparse);
  sparse.impl("_values", at::native::_values_sparse);
  sparse.impl("indices", at::native::indices_sparse);
  sparse.impl("values", at::native::values_sparse);
  sparse.impl("sparse_resize_and_clear_", at::native::sparse_resize_and_clear_);
  sparse.impl("copy_sparse_to_sparse_", at::native::copy_sparse_);
  sparse.impl("copy_", at::native::copy_sparse_wrapper_);
  // The compressed layouts' accessors (their constructors are composite kernels already).
  compressed.impl("empty.memory_format", at::native::empty_sparse_compressed_symint);
  compressed.impl("crow_indices", at::native::crow_indices_sparse_csr);
  compressed.impl("col_indices", at::native::col_indices_sparse_csr);
  compressed.impl("ccol_indices", at::native::ccol_indices_sparse_csr);
  compressed.impl("row_indices", at::native::row_indices_sparse_csr);
  compressed.impl("values", at::native::values_sparse_csr);
  compressed.impl("_nnz", at::native::_nnz_sparse_csr);
  compressed.impl("sparse_dim", at::native::sparse_dim_sparse_csr);
  compressed.impl("dense_dim", at::native::dense_dim_sparse_csr);
  compressed.impl("copy_", at::native::copy_sparse_compressed_);
  compressed.impl("resize_as_sparse_", at::native::resize_as_sparse_compressed_);
  sparse_fallback.fallback(torch::CppFunction::makeFromBoxedFunction<&sim_sparse_delegate_to_cpu>());
  compressed_fallback.fallback(torch::CppFunction::makeFromBoxedFunction<&sim_sparse_delegate_to_cpu>());
}

}  // namespace crossdev::sim
