// `crossdev._bench`: the benchmark inputs and memory-traffic model of crossdev_bench for Python (the
// torch.compile peer, bench/python/), a module of its own, built with the benchmarks
// (CROSSDEV_BUILD_BENCH=ON; python/CMakeLists.txt), so the core extension `crossdev._crossdev` does not
// depend on bench/. Python reaches it as `crossdev.bench` (python/crossdev/bench.py).
#include <torch/extension.h>

#include "model/sized_inputs.h"
#include "model/traffic_model.h"
#include "spec/bench_values.h"
#include "util/dtype_names.h"

namespace py = pybind11;

namespace crossdev::python {
namespace {

at::ScalarType dtype_arg(const std::string& name) {
  const auto dtype = matrix_float_dtype_from_name(name);
  if (!dtype) throw py::value_error("dtype '" + name + "': expected one of " + matrix_float_dtype_names());
  return *dtype;
}

const ops::OpSpec& op_arg(const std::string& name) {
  const ops::OpSpec* op = ops::find_op(name);
  if (!op) throw py::value_error("unknown op '" + name + "'");
  return *op;
}

void bind_bench(py::module_& bench) {
  bench.def("layouts", [] {
    py::list out;
    for (const auto& layout : bench::bench_layouts()) {
      out.append(py::make_tuple(layout.op, layout.granule, layout.description));
    }
    return out;
  }, "(op, granule, description) of every op's bench layout");

  bench.def(
      "make_inputs",
      [](const std::string& op, std::int64_t elements, const std::string& dtype, const std::string& device,
         std::uint64_t seed) {
        ops::OpCall call;
        try {
          call = bench::make_sized_inputs(op, elements, dtype_arg(dtype), c10::Device(device), seed);
        } catch (const std::invalid_argument& e) {
          throw py::value_error(e.what());
        }
        py::dict tensors, scalars;
        for (const auto& [name, tensor] : call.tensors) tensors[py::str(name)] = tensor;
        for (const auto& [name, value] : call.scalars) scalars[py::str(name)] = value;
        py::dict out;
        out["tensors"] = tensors;
        out["scalars"] = scalars;
        out["training"] = call.training;
        out["seed"] = seed;
        return out;
      },
      py::arg("op"), py::arg("elements"), py::arg("dtype") = "float32", py::arg("device") = "cpu",
      py::arg("seed") = 0,
      "the crossdev_bench inputs of (op, elements): the ops' portable generator under shape set 'bench_<elements>'");

  bench.def(
      "grad_inputs", [](const std::string& op) { return op_arg(op).grad_inputs(); }, py::arg("op"),
      "names of the op's inputs that get gradients in the fwd_bwd pass");

  bench.def(
      "traffic",
      [](const std::string& op, const std::map<std::string, at::Tensor>& tensors, const at::Tensor& output,
         const std::string& pass) {
        ops::OpCall call;
        call.tensors = tensors;
        const auto parsed = bench::pass_from_name(pass);
        if (!parsed) throw py::value_error("pass '" + pass + "': expected one of " + bench::pass_names());
        const bench::Traffic t = bench::compulsory_traffic(op_arg(op), call, output, *parsed);
        return py::make_tuple(t.bytes, t.elements);
      },
      py::arg("op"), py::arg("tensors"), py::arg("output"), py::arg("pass_name") = "fwd",
      "(bytes, elements) of one call under the compulsory-traffic model (bench/model/traffic_model.h)");
}

}  // namespace
}  // namespace crossdev::python

PYBIND11_MODULE(_bench, m) {
  m.doc() = "benchmark inputs and the memory-traffic model of crossdev_bench (crossdev.bench)";
  crossdev::python::bind_bench(m);
}
