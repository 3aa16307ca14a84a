#include "sim/sim_backend.h"

#include <atomic>
#include <memory>
#include <mutex>

#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/DeviceType.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/library.h>

#include "sim/native_kernels.h"
#include "sim/sim_guard.h"
#include "sim/sim_hooks.h"
#include "sim/sim_sparse.h"

namespace crossdev::sim {
namespace {

std::atomic<bool> g_registered{false};

void register_once() {
  c10::register_privateuse1_backend(kBackendName);
  c10::SetAllocator(c10::DeviceType::PrivateUse1, &SimAllocator::instance());
  // Registries keep these pointers for the life of the process.
  static c10::impl::DeviceGuardImplRegistrar guard_registrar(c10::DeviceType::PrivateUse1, new SimGuardImpl());
  at::RegisterPrivateUse1HooksInterface(new SimHooks());

  // torch::Library objects own their registrations; keeping them alive keeps the kernels.
  static torch::Library kernels(torch::Library::IMPL, "aten", c10::DispatchKey::PrivateUse1, __FILE__, __LINE__);
  register_native_kernels(kernels);
  static torch::Library cpu_delegate(torch::Library::IMPL, "_", c10::DispatchKey::PrivateUse1, __FILE__, __LINE__);
  cpu_delegate.fallback(torch::CppFunction::makeFromBoxedFunction<&sim_delegate_to_cpu>());
  static torch::Library sparse(torch::Library::IMPL, "aten", c10::DispatchKey::SparsePrivateUse1, __FILE__, __LINE__);
  static torch::Library sparse_delegate(torch::Library::IMPL, "_", c10::DispatchKey::SparsePrivateUse1, __FILE__, __LINE__);
  static torch::Library compressed_delegate(torch::Library::IMPL, "_", c10::DispatchKey::SparseCsrPrivateUse1, __FILE__,
                                            __LINE__);
  static torch::Library compressed(torch::Library::IMPL, "aten", c10::DispatchKey::SparseCsrPrivateUse1, __FILE__, __LINE__);
  register_sparse_kernels(sparse, compressed, sparse_delegate, compressed_delegate);
  // A PrivateUse1 copy reaches the backend as _copy_from, which the conjugate and negative
  // fallbacks would materialise by cloning the source: a clone is a copy into sim, i.e. _copy_from
  // again, and recursed until the stack overflowed (torch.conj(t).resolve_conj() segfaulted).
  // sim's _copy_from honours both bits itself (host_alias keeps them), so it is let through.
  static torch::Library conj_copy(torch::Library::IMPL, "aten", c10::DispatchKey::Conjugate, __FILE__, __LINE__);
  conj_copy.impl("_copy_from", torch::CppFunction::makeFallthrough());
  static torch::Library neg_copy(torch::Library::IMPL, "aten", c10::DispatchKey::Negative, __FILE__, __LINE__);
  neg_copy.impl("_copy_from", torch::CppFunction::makeFallthrough());
  g_registered.store(true);
}

}  // namespace

void register_backend() {
  static std::once_flag once;
  std::call_once(once, register_once);
}

bool backend_registered() noexcept { return g_registered.load(); }

c10::Device sim_device(int index) {
  register_backend();
  return c10::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(index));
}

}  // namespace crossdev::sim
