// FactorPhases: eigen, singular and QR factors are unique only up to a sign (a phase for complex) per
// column; LAPACK, cuSOLVER and MAGMA pick different ones. sim multiplies the odd-numbered columns (and
// the matching rows of R or Vh) by -1, or by i for complex eigen and singular vectors, so the
// factorization still holds exactly: A V = V diag(w), U diag(S) Vh, Q R.
#include <ATen/ATen.h>

#include "sim/diverging_steps.h"
#include "sim/host_alias.h"

namespace crossdev::sim::steps {
namespace {

// The per-column factors: 1 for even columns, `odd` for odd ones, in t's dtype (CPU).
at::Tensor column_phases(const at::Tensor& t, int64_t columns, bool complex_phase_i) {
  at::Tensor phases = at::ones({columns}, t.options().device(at::kCPU));
  if (columns < 2) return phases;
  at::Tensor odd = phases.slice(0, 1, columns, 2);
  if (t.is_complex() && complex_phase_i) odd.fill_(c10::complex<double>(0.0, 1.0));
  else odd.fill_(-1);
  return phases;
}

// Multiplies column j (dim -1) of a sim tensor by phases[j], in place; `conjugate` conjugates the phases,
// `rows` scales rows (dim -2) instead. The first `k` columns/rows only.
void scale(const at::Tensor& t, int64_t k, bool rows, bool conjugate, bool complex_phase_i) {
  if (!t.defined() || t.numel() == 0 || t.dim() < 2 || k < 2) return;
  at::Tensor host = host_alias(t);
  at::Tensor phases = column_phases(t, k, complex_phase_i);
  if (conjugate) phases = phases.conj().resolve_conj();
  at::Tensor part = rows ? host.narrow(-2, 0, k) : host.narrow(-1, 0, k);
  part.mul_(rows ? phases.unsqueeze(-1) : phases);
}

at::Tensor ret(const torch::jit::Stack& stack, std::size_t base, std::size_t i) {
  const c10::IValue& v = stack[base + i];
  return v.isTensor() ? v.toTensor() : at::Tensor();
}

}  // namespace

void eigh_vectors(const OpCall& call, const SimConfig&, torch::jit::Stack& stack, std::size_t base) {
  if (!call.arg("compute_v").toBool()) return;
  const at::Tensor vectors = ret(stack, base, 1);
  if (vectors.defined() && vectors.dim() >= 2) scale(vectors, vectors.size(-1), false, false, true);
}

void eig_vectors(const OpCall&, const SimConfig&, torch::jit::Stack& stack, std::size_t base) {
  const at::Tensor vectors = ret(stack, base, 1);
  if (vectors.defined() && vectors.dim() >= 2) scale(vectors, vectors.size(-1), false, false, true);
}

void svd_vectors(const OpCall& call, const SimConfig&, torch::jit::Stack& stack, std::size_t base) {
  if (!call.arg("compute_uv").toBool()) return;
  const at::Tensor u = ret(stack, base, 0);
  const at::Tensor s = ret(stack, base, 1);
  const at::Tensor vh = ret(stack, base, 2);
  if (!u.defined() || !vh.defined() || !s.defined() || s.dim() < 1) return;
  const int64_t k = s.size(-1);  // min(m, n): the singular triplets
  scale(u, k, false, false, true);
  scale(vh, k, true, true, true);
}

void qr_factors(const OpCall&, const SimConfig&, torch::jit::Stack& stack, std::size_t base) {
  const at::Tensor q = ret(stack, base, 0);
  const at::Tensor r = ret(stack, base, 1);
  if (!r.defined() || r.dim() < 2) return;
  const int64_t k = std::min(r.size(-2), r.size(-1));  // rows of R that Q's columns pair with
  // -1 for complex too: it keeps R's diagonal real, as LAPACK's and cuSOLVER's geqrf return it.
  if (q.defined() && q.numel() > 0) scale(q, k, false, false, false);  // mode='r' returns an empty Q
  scale(r, k, true, false, false);
}

}  // namespace crossdev::sim::steps
