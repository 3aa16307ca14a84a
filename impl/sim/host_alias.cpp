#include "sim/host_alias.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

namespace crossdev::sim {

at::Tensor host_alias(const at::Tensor& t) {
  TORCH_INTERNAL_ASSERT(t.is_privateuseone(), "host_alias expects a sim tensor, got ", t.device());
  if (t.numel() == 0) return at::empty(t.sizes(), t.options().device(at::kCPU));
  return at::from_blob(t.data_ptr(), t.sizes(), t.strides(), t.options().device(at::kCPU));
}

}  // namespace crossdev::sim
