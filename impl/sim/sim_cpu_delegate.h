#pragma once
// CPU delegation of the sim device: every op without a native sim kernel is delegated to the CPU
// kernel here (a boxed kernel registered with torch::Library::fallback), the way PyTorch's MPS
// backend runs ops it lacks on the CPU (aten/src/ATen/native/mps/MPSFallback.mm): enforce the active
// profile, then at::native::cpu_fallback moves the arguments to the CPU, runs the CPU kernel and
// moves results back. Each execution is recorded with the reason it took this path, so reports
// can say why an op did not run natively.
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <cstdint>
#include <map>
#include <string>

namespace crossdev::sim {

enum class DelegationReason : std::uint8_t {
  NoNativeSimKernel,   // the sim device computes through the CPU: expected for every computing op
  ProfileUnsupported,  // the profile lists the op as missing and the MPS CPU switch is on (MPS-style)
};
const char* delegation_reason_text(DelegationReason reason) noexcept;

struct DelegationRecord {
  DelegationReason reason = DelegationReason::NoNativeSimKernel;
  std::int64_t count = 0;
};

void sim_delegate_to_cpu(const c10::OperatorHandle& op, torch::jit::Stack* stack);
// The same for an op of a sparse or compressed sim tensor (the SparsePrivateUse1 and
// SparseCsrPrivateUse1 keys): at::native::cpu_fallback redispatches to the CPU's dense key, so this one
// moves every sim tensor to the CPU keeping its layout, calls the op through the whole dispatcher
// (SparseCPU, SparseCsrCPU, ...), copies what the op wrote back into the sim arguments, and moves the
// results to the device.
void sim_sparse_delegate_to_cpu(const c10::OperatorHandle& op, torch::jit::Stack* stack);

// "aten::add.Tensor" -> record, since the last reset.
std::map<std::string, DelegationRecord> delegation_records();
void reset_delegation_records();

}  // namespace crossdev::sim
