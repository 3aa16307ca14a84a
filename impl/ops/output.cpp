#include "ops/output.h"

#include <ATen/ops/empty.h>

namespace crossdev::ops {

at::Tensor output_for(const OpCall& call, at::IntArrayRef sizes, const at::TensorOptions& options) {
  const at::Tensor& out = call.out;
  if (out.defined() && out.sizes() == sizes && out.scalar_type() == options.dtype().toScalarType() &&
      out.device() == options.device() && out.is_contiguous()) {
    return out;
  }
  return at::empty(sizes, options.memory_format(at::MemoryFormat::Contiguous));
}

}  // namespace crossdev::ops
