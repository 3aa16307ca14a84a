#include "sim/host_alias.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

namespace crossdev::sim {

at::Tensor host_alias(const at::Tensor& t) {
  TORCH_INTERNAL_ASSERT(t.is_privateuseone(), "host_alias expects a sim tensor, got ", t.device());
  at::Tensor alias = t.numel() == 0 ? at::empty(t.sizes(), t.options().device(at::kCPU))
                                    : at::from_blob(t.data_ptr(), t.sizes(), t.strides(), t.options().device(at::kCPU));
  // The lazy conjugate and negative bits are part of the value (torch.conj, _neg_view): an alias
  // without them would copy the unconjugated numbers.
  alias._set_conj(t.is_conj());
  alias._set_neg(t.is_neg());
  return alias;
}

}  // namespace crossdev::sim
