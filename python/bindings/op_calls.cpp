// crossdev.ops.caller(op): one crossdev op as a plain CPython function (METH_FASTCALL), the fast
// path of crossdev.functional.<op> (python/crossdev/functional.py).
//
// torch.ops.crossdev.<op>(...) reaches the dispatcher through OpOverloadPacket.__call__ (Python),
// overload resolution, the __torch_function__ scan and torch's generic IValue conversion
// (createStackForSchema); at the smallest sizes that costs more than the kernel. This caller
// takes the same arguments (positional or by name, the schema's defaults) and, for the common
// case, converts them itself: Tensor (exactly torch.Tensor or Parameter), None for `Tensor?` and
// `Generator?`, a Python float or int for `float`, an int for `int`, a bool for `bool`. It then
// calls crossdev::<op> through the dispatcher with the GIL released, as torch.ops does, but
// unboxed, as a C++ caller of the op's signature would (ops/library/unboxed_call.h: no IValue
// stack, no boxed kernel wrapper), so autograd, FakeTensor, functionalization and every backend
// behave as through torch.ops.
//
// Anything else goes to torch.ops.crossdev.<op>.default unchanged, which then decides as it
// always does: a Tensor subclass or an active TorchFunctionMode (__torch_function__), a
// torch.Generator, a numpy or symbolic scalar, a missing, unknown or repeated argument (its
// TypeError is torch's own). So the result and every error are torch.ops'.
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/extension.h>

#include <ATen/PythonTorchFunctionTLS.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <string>
#include <vector>

#include "ops/library/unboxed_call.h"
#include "ops/op_spec.h"

namespace py = pybind11;

namespace crossdev::python {
namespace {

enum class ArgumentKind { Tensor, OptionalTensor, Float, Int, Bool, OptionalGenerator, Other };

ArgumentKind kind_of(const c10::Argument& arg) {
  const c10::TypePtr& type = arg.type();
  if (type->kind() == c10::TypeKind::TensorType) return ArgumentKind::Tensor;
  if (type->kind() == c10::TypeKind::FloatType) return ArgumentKind::Float;
  if (type->kind() == c10::TypeKind::IntType) return ArgumentKind::Int;
  if (type->kind() == c10::TypeKind::BoolType) return ArgumentKind::Bool;
  if (const auto optional = type->cast<c10::OptionalType>()) {
    const c10::TypeKind element = optional->getElementType()->kind();
    if (element == c10::TypeKind::TensorType) return ArgumentKind::OptionalTensor;
    if (element == c10::TypeKind::GeneratorType) return ArgumentKind::OptionalGenerator;
  }
  return ArgumentKind::Other;  // always the torch.ops path
}

// One op's caller: resolved once, when crossdev.ops.caller(op) is first asked for it.
struct OpCaller {
  ops::library::UnboxedCall unboxed = nullptr;   // crossdev::<op> (the default overload), unboxed
  std::vector<ArgumentKind> kinds;               // per schema argument
  std::vector<py::object> names;                 // the arguments' names, interned
  std::vector<std::optional<c10::IValue>> defaults;
  std::size_t positional = 0;                    // arguments that may be given by position
  py::object overload;                           // torch.ops.crossdev.<op>.default
};

// Position i of `values` from a Python object, or false when this caller does not convert it (the
// torch.ops path does).
bool convert(ArgumentKind kind, PyObject* obj, ops::library::ArgumentValues& values, std::size_t i) {
  switch (kind) {
    case ArgumentKind::OptionalTensor:
    case ArgumentKind::OptionalGenerator:
      if (obj == Py_None) return true;  // tensors[i] stays nullopt; a Generator? is None on this path
      if (kind == ArgumentKind::OptionalGenerator) return false;
      [[fallthrough]];
    case ArgumentKind::Tensor:
      if (!THPVariable_CheckExact(obj)) return false;  // a subclass may define __torch_function__
      values.tensors[i] = THPVariable_Unpack(obj);
      return true;
    case ArgumentKind::Float:
      if (PyFloat_CheckExact(obj)) {
        values.floats[i] = PyFloat_AS_DOUBLE(obj);
        return true;
      }
      [[fallthrough]];
    case ArgumentKind::Int:
      if (PyLong_CheckExact(obj)) {  // not bool (a subclass of int)
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
        if (overflow != 0) return false;
        if (kind == ArgumentKind::Float) {
          values.floats[i] = static_cast<double>(v);
        } else {
          values.ints[i] = static_cast<std::int64_t>(v);
        }
        return true;
      }
      return false;
    case ArgumentKind::Bool:
      if (obj == Py_True || obj == Py_False) {
        values.bools[i] = obj == Py_True;
        return true;
      }
      return false;
    case ArgumentKind::Other:
      return false;
  }
  return false;
}

// Position i of `values` from the schema's default, or false when this caller does not convert it.
bool convert_default(ArgumentKind kind, const c10::IValue& value, ops::library::ArgumentValues& values, std::size_t i) {
  switch (kind) {
    case ArgumentKind::OptionalTensor:
    case ArgumentKind::OptionalGenerator:
      return value.isNone();
    case ArgumentKind::Float:
      if (!value.isDouble() && !value.isInt()) return false;
      values.floats[i] = value.isDouble() ? value.toDouble() : static_cast<double>(value.toInt());
      return true;
    case ArgumentKind::Int:
      if (!value.isInt()) return false;
      values.ints[i] = value.toInt();
      return true;
    case ArgumentKind::Bool:
      if (!value.isBool()) return false;
      values.bools[i] = value.toBool();
      return true;
    case ArgumentKind::Tensor:
    case ArgumentKind::Other:
      return false;
  }
  return false;
}

// torch.ops.crossdev.<op>.default(*args, **kwargs), exactly as the caller was called.
PyObject* call_overload(const OpCaller& caller, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return PyObject_Vectorcall(caller.overload.ptr(), args, static_cast<std::size_t>(nargs), kwnames);
}

PyObject* call(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  HANDLE_TH_ERRORS
  const OpCaller& caller = *static_cast<const OpCaller*>(PyCapsule_GetPointer(self, nullptr));
  const std::size_t n = caller.kinds.size();
  if (static_cast<std::size_t>(nargs) > caller.positional || at::impl::torch_function_mode_enabled()) {
    return call_overload(caller, args, nargs, kwnames);
  }
  // Each schema argument's object: positional first, then by name; nullptr = not given.
  constexpr std::size_t kMax = ops::library::ArgumentValues::kMaxArguments;
  PyObject* given[kMax] = {};
  if (n > kMax) return call_overload(caller, args, nargs, kwnames);
  for (Py_ssize_t i = 0; i < nargs; ++i) given[i] = args[i];
  const Py_ssize_t nkw = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    PyObject* name = PyTuple_GET_ITEM(kwnames, k);
    std::size_t slot = n;
    for (std::size_t i = 0; i < n && slot == n; ++i) {
      if (name == caller.names[i].ptr()) slot = i;  // keyword names in code are interned, as ours are
    }
    for (std::size_t i = 0; i < n && slot == n; ++i) {
      if (PyUnicode_Check(name) && PyUnicode_Compare(name, caller.names[i].ptr()) == 0) slot = i;  // e.g. from **dict
    }
    if (slot == n || given[slot] != nullptr) return call_overload(caller, args, nargs, kwnames);
    given[slot] = args[nargs + k];
  }
  // Each tensor argument is copied into `values` here, with the GIL held, and released after the
  // GIL is taken back: a tensor that Python owns keeps its PyObject alive while C++ holds other
  // references (c10's "PyObject preservation": the C++ refcount going 1 -> 2 increfs the PyObject,
  // 2 -> 1 decrefs it, and the decref takes the GIL). So the kernels' own copies, made with the GIL
  // released, go 2 -> 3 -> 2 and never take the GIL back.
  ops::library::ArgumentValues values;
  for (std::size_t i = 0; i < n; ++i) {
    const bool converted = given[i] == nullptr
                               ? caller.defaults[i].has_value() && convert_default(caller.kinds[i], *caller.defaults[i], values, i)
                               : convert(caller.kinds[i], given[i], values, i);
    if (!converted) return call_overload(caller, args, nargs, kwnames);
  }
  at::Tensor result;
  {
    py::gil_scoped_release no_gil;
    result = caller.unboxed(values);
  }
  return THPVariable_Wrap(std::move(result));
  END_HANDLE_TH_ERRORS
}

PyMethodDef call_method = {"crossdev_op_call", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&call)),
                           METH_FASTCALL | METH_KEYWORDS, "One crossdev op (crossdev.functional)."};

py::object make_caller(const std::string& name) {
  TORCH_CHECK_VALUE(ops::find_op(name) != nullptr, "unknown op '", name, "'");
  const auto handle = c10::Dispatcher::singleton().findSchema({"crossdev::" + name, ""});
  TORCH_CHECK_VALUE(handle.has_value(), "crossdev::", name, " is not registered with the dispatcher");
  const ops::library::UnboxedCall unboxed = ops::library::unboxed_call(name);
  TORCH_CHECK(unboxed != nullptr, "crossdev::", name, " has no unboxed call (ops/library/unboxed_call.h)");
  auto caller = std::make_unique<OpCaller>(OpCaller{unboxed, {}, {}, {}, 0, py::none()});
  const c10::FunctionSchema& schema = handle->schema();
  TORCH_CHECK(schema.returns().size() == 1, "crossdev::", name, " returns ", schema.returns().size(), " values; expected one");
  for (const c10::Argument& arg : schema.arguments()) {
    caller->kinds.push_back(kind_of(arg));
    PyObject* interned = PyUnicode_InternFromString(arg.name().c_str());
    if (interned == nullptr) throw py::error_already_set();
    caller->names.push_back(py::reinterpret_steal<py::object>(interned));
    caller->defaults.push_back(arg.default_value());
    if (!arg.kwarg_only()) ++caller->positional;
  }
  caller->overload = py::module_::import("torch").attr("ops").attr("crossdev").attr(name.c_str()).attr("default");
  PyObject* capsule = PyCapsule_New(caller.get(), nullptr, [](PyObject* c) { delete static_cast<OpCaller*>(PyCapsule_GetPointer(c, nullptr)); });
  if (capsule == nullptr) throw py::error_already_set();
  caller.release();
  const py::object owner = py::reinterpret_steal<py::object>(capsule);  // the function holds its own reference
  PyObject* function = PyCFunction_NewEx(&call_method, owner.ptr(), nullptr);
  if (function == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(function);
}

}  // namespace

void bind_op_calls(py::module_& root) {
  py::module_ m = root.attr("ops");
  m.def("caller", &make_caller, py::arg("op"),
        "crossdev::<op> as a CPython function with the schema's arguments: the fast path of crossdev.functional.<op> "
        "(anything it does not convert itself goes to torch.ops.crossdev.<op>.default).");
}

}  // namespace crossdev::python
