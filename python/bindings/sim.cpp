// crossdev.sim: the `sim` PrivateUse1 backend from Python. `crossdev.sim.register()` registers it
// in C++ (c10::register_privateuse1_backend("sim") plus kernels), then does what
// torch.utils.rename_privateuse1_backend users do on the Python side: names the backend, installs
// this submodule as the device module `torch.sim`, and generates Tensor.is_sim / Tensor.sim().
#include <torch/extension.h>

#include <mutex>

#include "sim/divergence_switch.h"
#include "sim/sim_backend.h"
#include "sim/sim_generator.h"
#include "sim/sim_guard.h"
#include "sim/simulated_device.h"

namespace py = pybind11;

namespace crossdev::python {
namespace {

sim::ProfileId profile_id(const std::string& name) {
  const auto id = sim::profile_from_name(name);
  if (!id) throw py::value_error("unknown sim profile '" + name + "'; expected one of " + sim::profile_name_list());
  return *id;
}

py::dict config_dict(const sim::SimConfig& c) {
  py::dict d;
  d["profile"] = sim::profile_name(c.profile);
  // The device kind the profile stands for (None for plain): what a comparison on sim is about.
  const auto& emulates = sim::profile(c.profile).emulates;
  d["emulates"] = emulates ? py::object(py::str(std::string(kind_name(*emulates)))) : py::object(py::none());
  d["device_count"] = c.device_count;
  d["unsupported_ops"] = c.unsupported_ops;
  d["unsupported_ops_on_cpu"] = c.unsupported_ops_on_cpu;
  d["tf32_matmul"] = c.numerics.tf32_matmul;
  d["flush_subnormals"] = c.numerics.flush_subnormals;
  d["diverge"] = c.diverge;
  return d;
}

void seed_default_generator(c10::DeviceIndex device, std::uint64_t seed) {
  at::Generator gen = sim::default_generator(device);  // shares the default generator's state
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_current_seed(seed);
}

void register_with_python(py::module_& device_module) {
  sim::register_backend();
  py::module_ torch = py::module_::import("torch");
  py::module_::import("torch.utils").attr("rename_privateuse1_backend")(sim::kBackendName);
  if (!py::hasattr(torch, sim::kBackendName)) torch.attr("_register_device_module")(sim::kBackendName, device_module);
  if (!py::hasattr(torch.attr("Tensor"), "is_sim"))
    py::module_::import("torch.utils").attr("generate_methods_for_privateuse1_backend")(
        py::arg("for_tensor") = true, py::arg("for_module") = true, py::arg("for_storage") = true);
}

}  // namespace

void bind_sim(py::module_& m) {
  py::module_ s = m.def_submodule("sim", "The simulated accelerator (PrivateUse1 backend 'sim')");

  s.def("register", [s]() mutable { register_with_python(s); },
        "Register the backend (idempotent): torch.device('sim') works afterwards.");
  s.def("is_registered", &sim::backend_registered);

  s.def(
      "set_profile",
      [](const std::string& name, std::optional<int> device_count, std::optional<std::vector<std::string>> unsupported_ops,
         std::optional<bool> unsupported_ops_on_cpu, bool tf32_matmul, bool flush_subnormals,
         std::optional<bool> diverge) {
        sim::SimConfig c = sim::default_config(profile_id(name), device_count);
        if (diverge) c.diverge = *diverge;
        if (unsupported_ops) c.unsupported_ops = *unsupported_ops;
        if (unsupported_ops_on_cpu) c.unsupported_ops_on_cpu = *unsupported_ops_on_cpu;
        c.numerics.tf32_matmul = tf32_matmul;
        c.numerics.flush_subnormals = flush_subnormals;
        sim::set_config(c);
        return config_dict(c);
      },
      py::arg("name"), py::arg("device_count") = py::none(), py::arg("unsupported_ops") = py::none(),
      py::arg("unsupported_ops_on_cpu") = py::none(), py::arg("tf32_matmul") = false, py::arg("flush_subnormals") = false,
      py::arg("diverge") = py::none(),
      "Activate an emulation profile (plain, mps-like, tpu-like, cuda-like, xpu-like); returns the configuration.\n"
      "diverge: differ from the CPU wherever a real device may (docs/sim-backend.md); None takes $CROSSDEV_SIM_DIVERGE.");
  s.def(
      "diverging_kinds",
      [](const std::string& value) {
        try {
          std::vector<std::string> out;
          for (DeviceKind k : sim::parse_diverge_spec(value)) out.emplace_back(kind_name(k));
          return out;
        } catch (const std::invalid_argument& e) {
          throw py::value_error(e.what());
        }
      },
      py::arg("value"), "The kinds a CROSSDEV_SIM_DIVERGE value turns the divergence switch on for (ValueError if bad).");
  s.def("config", [] { return config_dict(*sim::current_config()); });
  s.def("profiles", [] {
    py::list out;
    for (sim::ProfileId id : sim::kAllProfiles) out.append(sim::profile_name(id));
    return out;
  });
  s.def(
      "device_for",
      [](const std::string& kind, int index, int device_count) {
        const auto k = kind_from_name(kind);
        if (!k) throw py::value_error("unknown device kind '" + kind + "'; expected one of " + valid_kind_list());
        try {
          const sim::SimulatedDevice d = sim::sim_device_for(*k, index, device_count);
          py::dict out;
          out["device"] = d.device.str();
          out["profile"] = sim::profile_name(d.profile);
          out["execution"] = provenance_name(d.provenance);
          out["label"] = d.label();
          return out;
        } catch (const std::invalid_argument& e) {
          throw py::value_error(e.what());
        }
      },
      py::arg("kind"), py::arg("index") = 0, py::arg("device_count") = -1,
      "Activate the profile emulating `kind` and return {'device': 'sim:<index>', 'execution': 'simulated', ...}.");

  // The device-module protocol torch uses for torch.<backend> (torch.sim.*).
  s.def("is_available", [] { return true; });
  s.def("is_initialized", &sim::backend_registered);
  s.def("_lazy_init", [] { sim::register_backend(); });
  s.def("device_count", [] { return sim::device_count(); });
  s.def("current_device", [] { return sim::current_device(); });
  s.def("set_device", [](int index) { sim::set_current_device(index); });
  s.def("synchronize", [](py::object) {}, py::arg("device") = py::none(), "The sim device is synchronous.");
  s.def("manual_seed", [](std::uint64_t seed) { seed_default_generator(-1, seed); });
  // The device-module RNG API torch.testing's freeze_rng_state (opcheck, OpInfo tests) calls on
  // the current accelerator: the default generator's state as a uint8 CPU tensor.
  s.def(
      "get_rng_state",
      [](int device) {
        at::Generator gen = sim::default_generator(static_cast<c10::DeviceIndex>(device));
        std::lock_guard<std::mutex> lock(gen.mutex());
        return gen.get_state();
      },
      py::arg("device") = -1);
  s.def(
      "set_rng_state",
      [](const at::Tensor& state, int device) {
        at::Generator gen = sim::default_generator(static_cast<c10::DeviceIndex>(device));
        std::lock_guard<std::mutex> lock(gen.mutex());
        gen.set_state(state);
      },
      py::arg("new_state"), py::arg("device") = -1);
  s.def("manual_seed_all", [](std::uint64_t seed) {
    for (int i = 0; i < sim::device_count(); ++i) seed_default_generator(static_cast<c10::DeviceIndex>(i), seed);
  });
  s.def("_is_in_bad_fork", [] { return false; });

  s.def("memory_stats", [](int device) { return sim::memory_stats(device); }, py::arg("device") = 0);
  s.def("memory_allocated", [](int device) { return sim::memory_stats(device).allocated; }, py::arg("device") = 0);
  s.def("max_memory_allocated", [](int device) { return sim::memory_stats(device).peak_allocated; },
        py::arg("device") = 0);
  s.def("memory_reserved", [](int device) { return sim::memory_stats(device).reserved; }, py::arg("device") = 0);
  s.def("reset_peak_memory_stats", &sim::reset_peak_memory_stats, py::arg("device") = 0);
  s.def("empty_cache", &sim::empty_cache);
  s.def("set_memory_limit", [](int device, std::int64_t bytes) { sim::SimAllocator::instance().set_memory_limit(device, bytes); },
        py::arg("device"), py::arg("bytes"), "Reserved-bytes capacity; beyond it allocations raise OutOfMemoryError.");

  s.def("delegation_records", [] {
    py::dict out;
    for (const auto& [op, r] : sim::delegation_records()) {
      py::dict d;
      d["count"] = r.count;
      d["reason"] = sim::delegation_reason_text(r.reason);
      out[py::str(op)] = d;
    }
    return out;
  });
  s.def("reset_delegation_records", &sim::reset_delegation_records);
}

}  // namespace crossdev::python
