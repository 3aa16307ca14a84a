#pragma once
// CROSSDEV_REGISTER_OP(<op>_definition, <C++ signature>): the one line an op folder's op.cpp ends
// with. The signature is the schema's in the dispatcher's C++ types, e.g. for
// "modulate(Tensor x, Tensor shift, Tensor scale) -> Tensor":
//   at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&)
// (Tensor? -> const std::optional<at::Tensor>&, float -> double, int -> int64_t, bool -> bool,
// Generator? -> std::optional<at::Generator>); the dispatcher refuses a signature that does not
// match the schema when the library loads. It adds the definition to the op table and registers
// with the PyTorch dispatcher, in the namespace that library.cpp claims with TORCH_LIBRARY(crossdev, m):
//   schemas   crossdev::<op>, crossdev::<op>.out, crossdev::<op>_backward (op_schemas.h)
//   CPU       the fused CPU kernel (the fallback when a fused-only predicate fails, logged)
//   CUDA      the fused .cu kernel, when the CUDA kernels are built
//   CompositeExplicitAutograd   the fallback composition: PrivateUse1 (sim), MPS, XPU, XLA and any
//                               backend without a kernel of its own
//   Meta      shapes and dtypes only (FakeTensor, torch.compile, torch.export); validates
//             symbolic shapes with the same predicates
//   Autograd  a torch::autograd::Function whose backward calls crossdev::<op>_backward
// The forward kernels and crossdev::<op>'s Autograd kernel are typed (typed_kernels.h); the
// backward's kernels and the Autograd kernels of <op>.out and <op>_backward are boxed, read the
// schema (call_marshal.h) and hold the op's definition (resolved at registration).
#include <torch/library.h>

#include "ops/library/typed_kernels.h"
#include "ops/op_definition.h"

namespace crossdev::ops::library {

// Adds `definition` to the op table (op_table.cpp); the returned reference is stable.
const OpDefinition& add_definition(OpDefinition definition);

void define_schemas(torch::Library& m, const OpDefinition& definition);
// The boxed Autograd kernels of crossdev::<op>.out and crossdev::<op>_backward.
void register_autograd_kernels(torch::Library& m, const OpDefinition& definition);
// crossdev::<op>_backward's kernels (backward_kernels.cpp); called by the forward registrations.
void register_native_backward(torch::Library& m, const OpDefinition& definition, c10::DispatchKey key);
void register_composite_backward(torch::Library& m, const OpDefinition& definition);
void register_meta_backward(torch::Library& m, const OpDefinition& definition);

}  // namespace crossdev::ops::library

// Static registration of one op. Everything happens in the op's own translation unit, in order
// (definition, schemas, kernels), so no registration can see a schema that is not there yet.
#define CROSSDEV_REGISTER_OP(definition_fn, ...)                                                       \
  namespace {                                                                                          \
  const ::crossdev::ops::OpDefinition& crossdev_registered_op() {                                       \
    static const ::crossdev::ops::OpDefinition& def = ::crossdev::ops::library::add_definition(definition_fn()); \
    return def;                                                                                        \
  }                                                                                                    \
  using crossdev_typed_kernels = ::crossdev::ops::library::TypedKernels<&crossdev_registered_op, __VA_ARGS__>; \
  }                                                                                                    \
  TORCH_LIBRARY_FRAGMENT(crossdev, m) { ::crossdev::ops::library::define_schemas(m, crossdev_registered_op()); } \
  TORCH_LIBRARY_IMPL(crossdev, CPU, m) {                                                               \
    if (crossdev_typed_kernels::register_native<c10::DispatchKey::CPU>(m))                            \
      ::crossdev::ops::library::register_native_backward(m, crossdev_registered_op(), c10::DispatchKey::CPU); \
  }                                                                                                    \
  TORCH_LIBRARY_IMPL(crossdev, CUDA, m) {                                                              \
    if (crossdev_typed_kernels::register_native<c10::DispatchKey::CUDA>(m))                               \
      ::crossdev::ops::library::register_native_backward(m, crossdev_registered_op(), c10::DispatchKey::CUDA); \
  }                                                                                                    \
  TORCH_LIBRARY_IMPL(crossdev, CompositeExplicitAutograd, m) {                                         \
    crossdev_typed_kernels::register_composite(m);                                                     \
    ::crossdev::ops::library::register_composite_backward(m, crossdev_registered_op());                \
  }                                                                                                    \
  TORCH_LIBRARY_IMPL(crossdev, Meta, m) {                                                              \
    crossdev_typed_kernels::register_meta(m);                                                          \
    ::crossdev::ops::library::register_meta_backward(m, crossdev_registered_op());                     \
  }                                                                                                    \
  TORCH_LIBRARY_IMPL(crossdev, Autograd, m) {                                                          \
    crossdev_typed_kernels::register_autograd(m);                                                      \
    ::crossdev::ops::library::register_autograd_kernels(m, crossdev_registered_op());                  \
  }

namespace crossdev::ops::library {
// Gradients of the fallback at `call` for every differentiable input (OpDefinition::inputs order;
// undefined where an input is absent or does not reach the output).
std::vector<at::Tensor> autograd_derived_backward(const OpDefinition& definition, const OpCall& call,
                                                  const at::Tensor& grad_out);
}  // namespace crossdev::ops::library
