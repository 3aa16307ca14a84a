// crossdev.ops: the op table from Python. Tensors cross through torch's own pybind11 casters;
// dtypes and devices are given as torch.dtype / torch.device (or "cuda:0"-style strings).
#include <torch/extension.h>
#include <torch/python.h>

#include "ops/cpu/capability.h"
#include "ops/generator_stream.h"
#include "ops/op_spec.h"

namespace py = pybind11;

namespace crossdev::python {
namespace {

const ops::OpSpec& op_or_throw(const std::string& name) {
  if (const ops::OpSpec* op = ops::find_op(name)) return *op;
  std::string valid;
  for (const ops::OpSpec* op : ops::all_ops()) valid += (valid.empty() ? "" : ", ") + std::string(op->name());
  throw py::value_error("unknown op '" + name + "'; expected one of: " + valid);
}

ops::Impl impl_or_throw(const std::string& name) {
  if (auto impl = ops::impl_from_name(name)) return *impl;
  throw py::value_error("unknown impl '" + name + "'; expected fused, fallback or torchscript");
}

ops::OpCall make_call(const std::map<std::string, std::optional<at::Tensor>>& tensors,
                      const std::map<std::string, double>& scalars, bool training, std::uint64_t seed) {
  ops::OpCall call;
  for (const auto& [name, t] : tensors) {
    if (t.has_value()) call.tensors[name] = *t;  // None = not given
  }
  call.scalars = scalars;
  call.training = training;
  // `seed` names the random stream as make_inputs does: one stream per seed on every device.
  if (training) {
    c10::Device device(c10::kCPU);
    for (const auto& [name, t] : call.tensors) {
      if (t.defined()) {
        device = t.device();
        break;
      }
    }
    call.generator = ops::generator_stream::harness_generator(device, seed);
  }
  return call;
}

py::dict record_dict(const ops::DispatchRecord& record) {
  py::list rejected;
  for (const ops::Rejection& r : record.rejected) {
    py::dict d;
    d["impl"] = ops::impl_name(r.impl);
    d["reason"] = r.reason;
    rejected.append(d);
  }
  py::dict d;
  d["ran"] = ops::impl_name(record.ran);
  d["rejected"] = rejected;
  return d;
}

}  // namespace

void bind_ops(py::module_& root) {
  py::module_ m = root.def_submodule("ops", "Fused / fallback / TorchScript kernels and their dispatcher (seed 000)");

  // Python sees the classified failures as their own exception types: NotEligible is a
  // ValueError (as its C++ type, a c10::ValueError), GraphFuserUnavailable a RuntimeError.
  py::register_exception<ops::NotEligible>(m, "NotEligible", PyExc_ValueError);
  py::register_exception<ops::GraphFuserUnavailable>(m, "GraphFuserUnavailable", PyExc_RuntimeError);

  // The instruction set the fused CPU kernels run with (ops/cpu/capability.h): "default",
  // "avx2" or "avx512"; CROSSDEV_CPU_CAPABILITY (as ATEN_CPU_CAPABILITY for ATen) forces it.
  m.def("cpu_capability", [] { return std::string(ops::cpu::capability_name(ops::cpu::cpu_capability())); });
  m.def("cpu_capability_info", [] {
    const ops::cpu::CpuCapabilityInfo info = ops::cpu::cpu_capability_info();
    py::dict d;
    d["chosen"] = ops::cpu::capability_name(info.chosen);
    d["hardware"] = ops::cpu::capability_name(info.hardware);
    d["built"] = ops::cpu::capability_name(info.built);
    d["source"] = info.source;
    py::list available;
    for (ops::cpu::CpuCapability c : ops::cpu::available_capabilities()) available.append(ops::cpu::capability_name(c));
    d["available"] = available;
    return d;
  });
  m.def("op_names", [] {
    std::vector<std::string> names;
    for (const ops::OpSpec* op : ops::all_ops()) names.emplace_back(op->name());
    return names;
  });
  m.def("impl_names", [] {
    std::vector<std::string> names;
    for (ops::Impl impl : ops::all_impls()) names.emplace_back(ops::impl_name(impl));
    return names;
  });
  m.def("shape_sets", [](const std::string& op) { return op_or_throw(op).shape_sets(); }, py::arg("op"));
  m.def("grad_inputs", [](const std::string& op) { return op_or_throw(op).grad_inputs(); }, py::arg("op"));

  m.def(
      "make_inputs",
      [](const std::string& op, const std::string& shape_set, py::object dtype, py::object device, std::uint64_t seed) {
        const at::ScalarType scalar_type = torch::python::detail::py_object_to_dtype(dtype);
        const c10::Device dev = py::isinstance<py::str>(device) ? c10::Device(device.cast<std::string>())
                                                                 : device.cast<c10::Device>();
        ops::OpCall call = op_or_throw(op).make_inputs(shape_set, scalar_type, dev, seed);
        py::dict d;
        d["tensors"] = call.tensors.to_map();
        d["scalars"] = call.scalars.to_map();
        d["training"] = call.training;
        d["seed"] = seed;  // the case's seed: run(..., seed) gives its random stream again
        return d;
      },
      py::arg("op"), py::arg("shape_set"), py::arg("dtype"), py::arg("device") = "cpu", py::arg("seed") = 0,
      "Portable inputs: {'tensors': {name: Tensor}, 'scalars': {name: float}, 'training': bool, 'seed': int}.");

  m.def(
      "run",
      [](const std::string& op, const std::string& impl, const std::map<std::string, std::optional<at::Tensor>>& tensors,
         const std::map<std::string, double>& scalars, bool training, std::uint64_t seed) {
        const ops::OpCall call = make_call(tensors, scalars, training, seed);
        return op_or_throw(op).run(impl_or_throw(impl), call);
      },
      py::arg("op"), py::arg("impl"), py::arg("tensors"), py::arg("scalars") = std::map<std::string, double>{},
      py::arg("training") = false, py::arg("seed") = 0,
      "Run exactly one implementation; raises crossdev.ops.NotEligible when its predicates fail.");

  m.def(
      "dispatch",
      [](const std::string& op, const std::map<std::string, std::optional<at::Tensor>>& tensors,
         const std::map<std::string, double>& scalars, bool training, std::uint64_t seed) {
        const ops::OpCall call = make_call(tensors, scalars, training, seed);
        ops::DispatchRecord record;
        at::Tensor out = op_or_throw(op).dispatch(call, &record);
        return py::make_tuple(out, record_dict(record));
      },
      py::arg("op"), py::arg("tensors"), py::arg("scalars") = std::map<std::string, double>{},
      py::arg("training") = false, py::arg("seed") = 0,
      "Fused if eligible, else the fallback. Returns (Tensor, {'ran': impl, 'rejected': [{'impl', 'reason'}]}).");

  m.def(
      "eligibility",
      [](const std::string& op, const std::string& impl, const std::map<std::string, std::optional<at::Tensor>>& tensors,
         const std::map<std::string, double>& scalars, bool training, std::uint64_t seed) {
        py::list out;
        for (const ops::PredicateResult& r :
             op_or_throw(op).eligibility(impl_or_throw(impl), make_call(tensors, scalars, training, seed))) {
          out.append(py::make_tuple(r.predicate, r.ok, r.explanation));
        }
        return out;
      },
      py::arg("op"), py::arg("impl"), py::arg("tensors"), py::arg("scalars") = std::map<std::string, double>{},
      py::arg("training") = false, py::arg("seed") = 0, "[(predicate, ok, explanation)] in evaluation order.");

  m.def(
      "set_script_executor",
      [](const std::string& name) {
        if (name == "profiling") return ops::set_script_executor(ops::ScriptExecutor::Profiling);
        if (name == "legacy_fuser") return ops::set_script_executor(ops::ScriptExecutor::LegacyFuser);
        throw py::value_error("unknown script executor '" + name + "'; expected profiling or legacy_fuser");
      },
      py::arg("name"));
  m.def("script_executor", [] { return std::string(ops::script_executor_name(ops::script_executor())); });
}

}  // namespace crossdev::python
