#pragma once
// The memory-traffic model behind bytes_per_second and bw_util: the compulsory traffic of one
// call, i.e. what a perfect single-pass kernel must move between memory and the cores.
//   forward:          every distinct input byte read once + every output byte written once
//   forward+backward: forward, then grad_out and every input read once more, and one gradient
//                     written per differentiable input that the call provides
// "Distinct" means a broadcast (stride-0) view counts only the storage it spans, so shift[B, D]
// broadcast over T rows costs B*D elements, not B*T*D. Scalars and seeds cost nothing; the
// dropout mask is generated in-kernel (portable_random.h), so it costs nothing either. Every
// implementation of an op is measured against the same bytes, so bw_util compares like with like.
#include <cstdint>

#include "ops/op_spec.h"

namespace crossdev::bench {

enum class Pass : std::uint8_t { Forward, ForwardBackward };
const char* pass_name(Pass pass) noexcept;  // "fwd", "fwd_bwd"

// Bytes of storage a tensor view spans, counting stride-0 (broadcast) dimensions once.
std::int64_t distinct_bytes(const at::Tensor& t);

struct Traffic {
  std::int64_t bytes = 0;     // per call
  std::int64_t elements = 0;  // numel of the output: the items of items_per_second
};

// `output` is the forward result of `call` (any implementation: they share shape and dtype).
Traffic compulsory_traffic(const ops::OpSpec& op, const ops::OpCall& call, const at::Tensor& output, Pass pass);

}  // namespace crossdev::bench
