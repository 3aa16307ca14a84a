#pragma once
// crossdev::<op> called with its arguments unboxed: the fast path of crossdev.functional.<op>
// (python/bindings/op_calls.cpp) reaches the dispatcher as a C++ caller of the op's typed
// signature does (TypedOperatorHandle::call), with no IValue stack, no boxed kernel wrapper and
// no copy of an argument on the way; the dispatcher then runs the same kernels, in the same order
// (Autograd, then the backend's; a boxed fallback such as Python's dispatch modes gets its
// arguments boxed by the dispatcher), as a boxed call through torch.ops does.
//
// The caller fills ArgumentValues by schema position, with the GIL held: each tensor argument is
// held by `tensors` while the op runs, so the kernels' own copies of it never take the tensor's
// C++ reference count from 1 to 2 and back (which, for a tensor Python owns, increfs and decrefs
// its PyObject and would take the GIL back).
#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace crossdev::ops::library {

// One call's arguments by schema position; only the member of each position's type is read.
struct ArgumentValues {
  static constexpr std::size_t kMaxArguments = 16;  // the typed kernels' bound too (typed_kernels.h)
  std::optional<at::Tensor> tensors[kMaxArguments];  // Tensor (has a value) and Tensor? (None: nullopt)
  // Left uninitialized: the caller sets every position of the member its type reads.
  double floats[kMaxArguments];                      // float
  std::int64_t ints[kMaxArguments];                  // int
  bool bools[kMaxArguments];                         // bool
  // Every Generator? argument: None on this path (a torch.Generator takes the boxed one).
  std::optional<at::Generator> no_generator;
};

// Calls crossdev::<op> (the default overload) through the dispatcher with `arguments`.
using UnboxedCall = at::Tensor (*)(const ArgumentValues& arguments);

// Set once per op when its Autograd kernel is registered (typed_kernels.h); nullptr for a name
// that is no registered op.
void register_unboxed_call(std::string_view op, UnboxedCall call);
UnboxedCall unboxed_call(std::string_view op);

}  // namespace crossdev::ops::library
