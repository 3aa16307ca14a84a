#pragma once
// The typed forward kernels of one op: crossdev::<op> and crossdev::<op>.out registered with
// m.impl(name, TORCH_FN(...)), so the dispatcher calls a C++ function with the op's own signature
// (no boxing on a C++ call, and the dispatcher's own unboxing from Python).
//
// The signature is written once, next to the schema, in the op's CROSSDEV_REGISTER_OP line; the
// dispatcher compares it with the schema when the kernel is registered and refuses a mismatch at
// load. What each argument means (an input tensor, a scalar, `training`, `seed`, the generator)
// comes from the schema's argument names, read once at registration (argument_slots, and the
// tensor and scalar positions sorted by name): a call stages its arguments by position and appends
// them to the OpCall's name-sorted tables in that order, with no lookup of the op, no search, no
// map and no string built while the call is valid. The kernels' logic is not templated (forward_kernels.cpp).
//
// The Autograd kernel of crossdev::<op> is typed too: a call that needs no graph (grad mode off,
// or no tensor argument requires grad) goes straight to the backend's typed kernel through a
// handle resolved at registration, with no lookup, boxing or allocation; one that does boxes its
// arguments once and records the op (autograd_record_forward, autograd_kernels.cpp), which raises
// naming an input that requires grad but is not differentiable.
//
// TypedKernels::unboxed calls crossdev::<op> through that handle from an ArgumentValues
// (unboxed_call.h), for the Python fast path: registered with the Autograd kernel.
#include <ATen/core/LegacyTypeDispatch.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/GradMode.h>
#include <torch/library.h>

#include <algorithm>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "ops/library/call_marshal.h"
#include "ops/library/unboxed_call.h"
#include "ops/op_definition.h"

namespace crossdev::ops::library {

// The kernels' bodies (forward_kernels.cpp): `call` holds the op's arguments.
at::Tensor native_forward(const OpDefinition& definition, c10::DispatchKey key, OpCall& call);
void native_forward_out(const OpDefinition& definition, c10::DispatchKey key, OpCall& call, const at::Tensor& out);
at::Tensor composite_forward(const OpDefinition& definition, OpCall& call);
void composite_forward_out(const OpDefinition& definition, OpCall& call, const at::Tensor& out);
at::Tensor meta_forward(const OpDefinition& definition, OpCall& call);
void meta_forward_out(const OpDefinition& definition, OpCall& call, const at::Tensor& out);
// The fused kernel of `key` (CPU or CUDA), nullptr when not built.
KernelFn native_kernel(const OpDefinition& definition, c10::DispatchKey key);
// Whether <op>.out's schema returns `out` (`-> Tensor(a!)`) rather than nothing (`-> ()`).
bool out_overload_returns_out(const OpDefinition& definition);
// The Autograd kernel's recording path (autograd_kernels.cpp): runs `op` (crossdev::<op>) below
// autograd on `arguments` (the schema's, in order) and returns its result attached to a graph
// node whose backward calls crossdev::<op>_backward.
at::Tensor autograd_record_forward(const OpDefinition& definition, const c10::OperatorHandle& op,
                                   std::vector<c10::IValue> arguments);

// Whether one argument of a typed kernel is a tensor that requires grad.
inline bool requires_grad_of(const at::Tensor& t) { return t.defined() && t.requires_grad(); }
inline bool requires_grad_of(const std::optional<at::Tensor>& t) { return t.has_value() && requires_grad_of(*t); }
template <typename T>
bool requires_grad_of(const T& /*not a tensor*/) { return false; }

// One argument of an unboxed call (unboxed_call.h), by its C++ type in the op's signature.
template <typename T>
struct UnboxedArgument;
template <>
struct UnboxedArgument<const at::Tensor&> {
  static const at::Tensor& get(const ArgumentValues& a, std::size_t i) { return *a.tensors[i]; }
};
template <>
struct UnboxedArgument<const std::optional<at::Tensor>&> {
  static const std::optional<at::Tensor>& get(const ArgumentValues& a, std::size_t i) { return a.tensors[i]; }
};
template <>
struct UnboxedArgument<double> {
  static double get(const ArgumentValues& a, std::size_t i) { return a.floats[i]; }
};
template <>
struct UnboxedArgument<std::int64_t> {
  static std::int64_t get(const ArgumentValues& a, std::size_t i) { return a.ints[i]; }
};
template <>
struct UnboxedArgument<bool> {
  static bool get(const ArgumentValues& a, std::size_t i) { return a.bools[i]; }
};
template <>
struct UnboxedArgument<std::optional<at::Generator>> {
  static const std::optional<at::Generator>& get(const ArgumentValues& a, std::size_t /*i*/) { return a.no_generator; }
};

// One call's arguments by schema position, staged so that they enter the OpCall's name-sorted
// tensors and scalars in name order (NamedValues::append_in_order: no search, no shifting).
struct StagedArguments {
  static constexpr std::size_t kMaxArguments = ArgumentValues::kMaxArguments;
  const at::Tensor* tensors[kMaxArguments] = {};  // nullptr: not a tensor, or not given
  double scalars[kMaxArguments] = {};
};

// One argument of the typed kernel (schema position `i`): staged, or straight into the call.
inline void stage_argument(StagedArguments& staged, std::size_t i, OpCall& /*call*/, const at::Tensor& t) {
  if (t.defined()) staged.tensors[i] = &t;
}
inline void stage_argument(StagedArguments& staged, std::size_t i, OpCall& /*call*/, const std::optional<at::Tensor>& t) {
  if (t.has_value() && t->defined()) staged.tensors[i] = &*t;
}
inline void stage_argument(StagedArguments& staged, std::size_t i, OpCall& /*call*/, double value) {
  staged.scalars[i] = value;
}
inline void stage_argument(StagedArguments& staged, std::size_t i, OpCall& /*call*/, std::int64_t value) {
  staged.scalars[i] = static_cast<double>(value);
}
inline void stage_argument(StagedArguments& /*staged*/, std::size_t /*training*/, OpCall& call, bool value) {
  call.training = value;
}
inline void stage_argument(StagedArguments& /*staged*/, std::size_t /*generator*/, OpCall& call,
                           const std::optional<at::Generator>& g) {
  call.generator = g;
}

// The schema positions of the slots with `role`, in the order of their names (std::string's <,
// NamedValues' order).
inline std::vector<std::size_t> positions_by_name(const std::vector<ArgumentSlot>& slots, ArgumentRole role) {
  std::vector<std::size_t> positions;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    if (slots[i].role == role) positions.push_back(i);
  }
  std::sort(positions.begin(), positions.end(), [&](std::size_t a, std::size_t b) { return slots[a].name < slots[b].name; });
  return positions;
}

template <const OpDefinition& (*Definition)(), typename Signature>
struct TypedKernels;

template <const OpDefinition& (*Definition)(), typename... Args>
struct TypedKernels<Definition, at::Tensor(Args...)> {
  // Set once by prepare(), during static registration; constant-initialized to null before.
  static inline const OpDefinition* definition = nullptr;
  static inline const std::vector<ArgumentSlot>* slots = nullptr;
  // The schema positions of the tensor and of the scalar arguments, in name order.
  static inline const std::vector<std::size_t>* tensor_positions = nullptr;
  static inline const std::vector<std::size_t>* scalar_positions = nullptr;

  static void prepare() {
    if (slots != nullptr) return;
    definition = &Definition();
    auto* s = new std::vector<ArgumentSlot>(argument_slots(*definition));  // lives as long as the kernels
    TORCH_CHECK(s->size() == sizeof...(Args), "crossdev op '", definition->name, "': CROSSDEV_REGISTER_OP's signature has ",
                sizeof...(Args), " arguments but the schema '", definition->schema, "' has ", s->size());
    TORCH_CHECK(s->size() <= StagedArguments::kMaxArguments, "crossdev op '", definition->name, "' has ", s->size(),
                " arguments; the typed kernels take at most ", StagedArguments::kMaxArguments);
    tensor_positions = new std::vector<std::size_t>(positions_by_name(*s, ArgumentRole::Tensor));
    scalar_positions = new std::vector<std::size_t>(positions_by_name(*s, ArgumentRole::Scalar));
    slots = s;
  }

  static void fill(OpCall& call, const Args&... args) {
    StagedArguments staged;
    std::size_t position = 0;
    (stage_argument(staged, position++, call, args), ...);  // left to right: the schema's order
    const ArgumentSlot* slot = slots->data();
    for (const std::size_t i : *tensor_positions) {
      if (staged.tensors[i] != nullptr) call.tensors.append_in_order(slot[i].name, *staged.tensors[i]);
    }
    for (const std::size_t i : *scalar_positions) call.scalars.append_in_order(slot[i].name, staged.scalars[i]);
  }

  // Whether a tensor argument requires grad: a differentiable input's records the op, any other's
  // makes the recording path raise naming it (never a result silently cut from the graph).
  static bool any_input_requires_grad(const Args&... args) { return (requires_grad_of(args) || ...); }

  // crossdev::<op>'s handle with this signature; set by register_autograd, before any call.
  static inline const c10::TypedOperatorHandle<at::Tensor(Args...)>* forward_handle = nullptr;

  static at::Tensor autograd(c10::DispatchKeySet keys, Args... args) {
    if (c10::GradMode::is_enabled() && any_input_requires_grad(args...)) {
      return autograd_record_forward(*definition, *forward_handle, std::vector<c10::IValue>{c10::IValue(args)...});
    }
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    return forward_handle->redispatch(keys & c10::after_ADInplaceOrView_keyset, args...);
  }

  // crossdev::<op> through the dispatcher with `a`'s arguments (unboxed_call.h).
  static at::Tensor unboxed(const ArgumentValues& a) { return unboxed_in_order(a, std::index_sequence_for<Args...>{}); }
  template <std::size_t... I>
  static at::Tensor unboxed_in_order(const ArgumentValues& a, std::index_sequence<I...> /*positions*/) {
    return forward_handle->call(UnboxedArgument<Args>::get(a, I)...);
  }

  template <c10::DispatchKey Key>
  static at::Tensor native(Args... args) {
    OpCall call;
    fill(call, args...);
    return native_forward(*definition, Key, call);
  }
  template <c10::DispatchKey Key>
  static void native_out(Args... args, at::Tensor& out) {
    OpCall call;
    fill(call, args...);
    native_forward_out(*definition, Key, call, out);
  }
  template <c10::DispatchKey Key>
  static at::Tensor& native_out_returning(Args... args, at::Tensor& out) {
    native_out<Key>(args..., out);
    return out;
  }

  static at::Tensor composite(Args... args) {
    OpCall call;
    fill(call, args...);
    return composite_forward(*definition, call);
  }
  static void composite_out(Args... args, at::Tensor& out) {
    OpCall call;
    fill(call, args...);
    composite_forward_out(*definition, call, out);
  }
  static at::Tensor& composite_out_returning(Args... args, at::Tensor& out) {
    composite_out(args..., out);
    return out;
  }

  static at::Tensor meta(Args... args) {
    OpCall call;
    fill(call, args...);
    return meta_forward(*definition, call);
  }
  static void meta_out(Args... args, at::Tensor& out) {
    OpCall call;
    fill(call, args...);
    meta_forward_out(*definition, call, out);
  }
  static at::Tensor& meta_out_returning(Args... args, at::Tensor& out) {
    meta_out(args..., out);
    return out;
  }

  static std::string out_name() { return std::string(Definition().name) + ".out"; }

  // False (and nothing registered) when the op has no fused kernel for `Key` (CUDA not built).
  template <c10::DispatchKey Key>
  static bool register_native(torch::Library& m) {
    if (native_kernel(Definition(), Key) == nullptr) return false;
    prepare();
    m.impl(Definition().name, TORCH_FN((&TypedKernels::native<Key>)));
    if (out_overload_returns_out(Definition())) {
      m.impl(out_name().c_str(), TORCH_FN((&TypedKernels::native_out_returning<Key>)));
    } else {
      m.impl(out_name().c_str(), TORCH_FN((&TypedKernels::native_out<Key>)));
    }
    return true;
  }
  static void register_composite(torch::Library& m) {
    prepare();
    m.impl(Definition().name, TORCH_FN(&TypedKernels::composite));
    if (out_overload_returns_out(Definition())) {
      m.impl(out_name().c_str(), TORCH_FN(&TypedKernels::composite_out_returning));
    } else {
      m.impl(out_name().c_str(), TORCH_FN(&TypedKernels::composite_out));
    }
  }
  // crossdev::<op>'s Autograd kernel; the op's schema is already defined (register_op.h's order).
  static void register_autograd(torch::Library& m) {
    prepare();
    if (forward_handle == nullptr) {
      const std::string full = "crossdev::" + std::string(Definition().name);
      forward_handle = new c10::TypedOperatorHandle<at::Tensor(Args...)>(  // lives as long as the kernels
          c10::Dispatcher::singleton().findSchemaOrThrow(full.c_str(), "").template typed<at::Tensor(Args...)>());
      register_unboxed_call(Definition().name, &TypedKernels::unboxed);
    }
    m.impl(Definition().name, TORCH_FN(&TypedKernels::autograd));
  }

  static void register_meta(torch::Library& m) {
    prepare();
    m.impl(Definition().name, TORCH_FN(&TypedKernels::meta));
    if (out_overload_returns_out(Definition())) {
      m.impl(out_name().c_str(), TORCH_FN(&TypedKernels::meta_out_returning));
    } else {
      m.impl(out_name().c_str(), TORCH_FN(&TypedKernels::meta_out));
    }
  }
};

}  // namespace crossdev::ops::library
