// The `crossdev._crossdev` extension. Each area binds itself in its own file
// (bindings/<area>.cpp, `void bind_<area>(pybind11::module_&)`); register it here.
#include <torch/extension.h>

namespace crossdev::python {
void bind_memory_stats(pybind11::module_& m);
void bind_policy(pybind11::module_& m);
void bind_parity(pybind11::module_& m);
void bind_sim(pybind11::module_& m);
void bind_ops(pybind11::module_& m);
void bind_op_calls(pybind11::module_& m);  // after bind_ops: adds to crossdev.ops
void bind_manager(pybind11::module_& m);
void bind_harness(pybind11::module_& m);
}  // namespace crossdev::python

PYBIND11_MODULE(_crossdev, m) {
  m.doc() = "crossdev: device specs, redirect policy, host simulation, conformance harness";
  crossdev::python::bind_memory_stats(m);  // first: the manager and sim bindings return it
  crossdev::python::bind_policy(m);
  crossdev::python::bind_parity(m);
  crossdev::python::bind_sim(m);
  crossdev::python::bind_ops(m);
  crossdev::python::bind_op_calls(m);
  crossdev::python::bind_manager(m);
  crossdev::python::bind_harness(m);
}
