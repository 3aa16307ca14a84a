// ReductionOrder and BlockedScan: a device reduces in its own order (tree reductions across threads and
// blocks, split-K GEMMs), so sums differ from the CPU's by rounding. sim runs the CPU kernel on the input
// reversed and then rotated by one along each reduced dim (the same values, combined in another order;
// softmax's output is put back in place). Neither alone will do: a pairwise sum of the reversed values is
// the mirror of the CPU's tree and, addition commuting, often bit-identical; a rotation by one keeps most
// values in step with the CPU's vector lanes. cumsum adds each block of 16's prefix to the next block's
// local scan, as a device's blocked scan does, instead of the CPU's one running (double) sum. Tf32Operands
// is here too: the GEMM operands rounded to TF32 when PyTorch's flag for the kind allows it (numerics.cpp
// rounds).
#include <ATen/ATen.h>

#include <algorithm>
#include <vector>

#include "sim/divergence_switch.h"
#include "sim/diverging_steps.h"
#include "sim/host_alias.h"
#include "sim/numerics.h"

namespace crossdev::sim::steps {
namespace {

constexpr int64_t kScanBlock = 16;

bool reorders(const at::Tensor& t) {
  return t.defined() && t.is_privateuseone() && t.dim() > 0 && t.numel() > 1 &&
         (at::isFloatingType(t.scalar_type()) || at::isComplexType(t.scalar_type()));
}

// The reordering: reversed, then rotated by one, along each of `dims`; and its inverse.
at::Tensor reorder(const at::Tensor& host, at::IntArrayRef dims) {
  return host.flip(dims).roll(std::vector<int64_t>(dims.size(), 1), dims);
}
at::Tensor restore_order(const at::Tensor& host, at::IntArrayRef dims) {
  return host.roll(std::vector<int64_t>(dims.size(), -1), dims).flip(dims);
}

// `self` on the stack replaced by a sim copy reordered along `dims`.
void reorder_self(const OpCall& call, torch::jit::Stack& stack, std::size_t base, const std::vector<int64_t>& dims) {
  const std::size_t i = call.index("self");
  const at::Tensor self = call.args[i].toTensor();
  if (!reorders(self) || dims.empty()) return;
  stack[base + i] = sim_copy_of(reorder(host_alias(self), dims), self);
}

}  // namespace

void tf32_gemm_operands(const OpCall& call, const SimConfig& config, torch::jit::Stack& stack, std::size_t) {
  if (tf32_for_gemm(config.profile)) round_matmul_operands(call.schema, stack);
}

void reorder_reduced_dims(const OpCall& call, const SimConfig&, torch::jit::Stack& stack, std::size_t base) {
  const at::Tensor self = call.arg("self").toTensor();
  if (!reorders(self)) return;
  std::vector<int64_t> dims;
  const c10::IValue& dim = call.arg("dim");
  if (dim.isIntList())
    for (int64_t d : dim.toIntVector()) dims.push_back(c10::maybe_wrap_dim(d, self.dim()));
  if (dims.empty())  // None or []: every dim
    for (int64_t d = 0; d < self.dim(); ++d) dims.push_back(d);
  reorder_self(call, stack, base, dims);
}

void reorder_softmax_dim(const OpCall& call, const SimConfig&, torch::jit::Stack& stack, std::size_t base) {
  const at::Tensor self = call.arg("self").toTensor();
  if (!reorders(self)) return;
  reorder_self(call, stack, base, {c10::maybe_wrap_dim(call.arg("dim").toInt(), self.dim())});
}

void restore_softmax_dim(const OpCall& call, const SimConfig&, torch::jit::Stack& stack, std::size_t base) {
  const at::Tensor self = call.arg("self").toTensor();
  const at::Tensor out = stack[base].toTensor();
  if (!reorders(self) || !out.defined() || out.numel() == 0) return;
  at::Tensor host = host_alias(out);
  host.copy_(restore_order(host, {c10::maybe_wrap_dim(call.arg("dim").toInt(), self.dim())}));
}

void blocked_cumsum(const OpCall& call, const SimConfig&, torch::jit::Stack& stack, std::size_t base) {
  const at::Tensor self = call.arg("self").toTensor();
  const at::Tensor out = stack[base].toTensor();
  if (!reorders(self) || !out.defined() || out.numel() == 0 || !out.is_privateuseone()) return;
  if (!at::isFloatingType(out.scalar_type()) && !at::isComplexType(out.scalar_type())) return;
  const int64_t d = c10::maybe_wrap_dim(call.arg("dim").toInt(), self.dim());
  const int64_t n = self.size(d);
  if (n <= kScanBlock) return;  // one block: the CPU's scan
  const at::Tensor x = host_alias(self).to(out.scalar_type());
  at::Tensor result = at::empty(x.sizes(), x.options());
  at::Tensor carry;
  for (int64_t start = 0; start < n; start += kScanBlock) {
    const int64_t len = std::min(kScanBlock, n - start);
    at::Tensor block = x.narrow(d, start, len).cumsum(d);
    if (carry.defined()) block.add_(carry);
    result.narrow(d, start, len).copy_(block);
    carry = block.narrow(d, len - 1, 1);
  }
  host_alias(out).copy_(result);
}

}  // namespace crossdev::sim::steps
