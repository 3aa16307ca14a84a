#include "ops/output.h"

#include <ATen/EmptyTensor.h>
#include <ATen/ops/empty.h>

namespace crossdev::ops {

at::Tensor output_for(const OpCall& call, at::IntArrayRef sizes, const at::TensorOptions& options) {
  const at::Tensor& out = call.out;
  if (out.defined() && out.sizes() == sizes && out.scalar_type() == options.dtype().toScalarType() &&
      out.device() == options.device() && out.is_contiguous()) {
    return out;
  }
  // A CPU result is allocated as ATen's own CPU kernels allocate theirs (the structured kernels'
  // create_out: at::detail::empty_*_cpu), not through the dispatcher's aten::empty, which at the
  // per-call size cost about a tenth of the call. The kernel writes every element.
  if (options.device().is_cpu()) {
    return at::detail::empty_cpu(sizes, options.dtype().toScalarType(), /*pin_memory=*/false, at::MemoryFormat::Contiguous);
  }
  return at::empty(sizes, options.memory_format(at::MemoryFormat::Contiguous));
}

}  // namespace crossdev::ops
