#include "model/traffic_model.h"

#include <algorithm>

namespace crossdev::bench {

const char* pass_name(Pass pass) noexcept { return pass == Pass::Forward ? "fwd" : "fwd_bwd"; }

std::int64_t distinct_bytes(const at::Tensor& t) {
  if (!t.defined()) return 0;
  std::int64_t elements = 1;
  for (std::int64_t d = 0; d < t.dim(); ++d) {
    if (t.stride(d) != 0) elements *= t.size(d);
  }
  if (t.numel() == 0) elements = 0;
  return elements * static_cast<std::int64_t>(t.element_size());
}

Traffic compulsory_traffic(const ops::OpSpec& op, const ops::OpCall& call, const at::Tensor& output, Pass pass) {
  std::int64_t inputs = 0;
  for (const auto& [name, tensor] : call.tensors) inputs += distinct_bytes(tensor);
  const std::int64_t out = distinct_bytes(output);

  Traffic traffic;
  traffic.elements = output.numel();
  traffic.bytes = inputs + out;
  if (pass == Pass::ForwardBackward) {
    std::int64_t grads = 0;
    for (const std::string& name : op.grad_inputs()) {
      if (call.has_tensor(name)) grads += distinct_bytes(call.tensor(name));
    }
    traffic.bytes += out + inputs + grads;
  }
  return traffic;
}

}  // namespace crossdev::bench
