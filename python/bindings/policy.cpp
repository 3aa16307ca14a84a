// parse_device, host profiles (real or simulated), resolve through a preset, context policy,
// and matrix running — the pieces the pytest driver needs.
#include <torch/extension.h>

#include "device/device_spec.h"
#include "device/host_profile.h"
#include "policy/context_policy.h"
#include "policy/redirect_policy.h"
#include "runner/catalog.h"
#include "runner/run_context.h"
#include "runner/runner.h"

namespace py = pybind11;

namespace crossdev::python {
namespace {

py::dict spec_dict(const DeviceSpec& s) {
  py::dict d;
  d["type"] = kind_name(s.kind);
  d["index"] = s.has_index() ? py::object(py::int_(s.index)) : py::object(py::none());
  d["cpu_override"] = s.cpu_override;
  d["str"] = s.str();
  return d;
}

py::dict host_dict(const HostProfile& host) {
  py::dict d;
  py::dict kinds;
  for (DeviceKind kind : kAllDeviceKinds) {
    const auto& p = host.presence(kind);
    if (p.count == 0) continue;
    py::dict k;
    k["count"] = p.count;
    k["provenance"] = provenance_name(p.provenance);
    kinds[kind_name(kind)] = k;
  }
  d["kinds"] = kinds;
  d["simulated"] = host.any_simulated();
  d["source"] = host.source();
  return d;
}

HostProfile host_from(const std::string& host, bool hypothetical) {
  try {
    return hypothetical ? HostProfile::named_or_spec(host) : HostProfile::probe_with_simulation(host);
  } catch (const std::invalid_argument& e) {
    throw py::value_error(e.what());
  }
}

}  // namespace

void bind_policy(py::module_& m) {
  py::register_exception<DeviceSpecError>(m, "DeviceSpecError", PyExc_ValueError);

  m.def("parse_device", [](const std::string& text) { return spec_dict(parse_device(text)); }, py::arg("text"),
        "Parse 'type[:index]' (plus 'tpu' alias and 'cpu:-1'); raises DeviceSpecError (a ValueError).");

  m.def("host_profile", [](const std::string& simulate, bool hypothetical) { return host_dict(host_from(simulate, hypothetical)); },
        py::arg("simulate") = "", py::arg("hypothetical") = false,
        "This host (real probe plus simulated kinds), or with hypothetical=True a named/spec host alone.");

  m.def("presets", [] {
    py::list out;
    for (const Preset* preset : all_presets()) {
      py::list order;
      for (std::uint8_t j = 0; j < preset->order_len; ++j) order.append(kind_name(preset->order[j]));
      py::dict d;
      d["name"] = preset->name;
      d["order"] = order;
      d["source"] = preset->source;
      d["redirects_by_default"] = preset->redirects_by_default;
      out.append(d);
    }
    return out;
  });

  m.def(
      "resolve",
      [](const std::vector<py::object>& requests, const std::string& host, const std::string& policy, bool cpu_override,
         const std::string& allow_redirects, const std::string& via, bool hypothetical) {
        const Preset* preset = find_preset(policy);
        if (!preset) throw py::value_error("unknown policy '" + policy + "'; expected one of " + preset_names());
        const auto via_kind = via_from_name(via);
        if (!via_kind) throw py::value_error("unknown via '" + via + "'; expected create, to or implicit");
        const HostProfile profile = host_from(host, hypothetical);
        PolicyState state = PolicyState::for_preset(*preset, allow_redirects);
        state.cpu_override = cpu_override;
        RedirectPolicy engine(*preset);
        py::list out;
        for (const auto& req : requests) {
          DeviceSpec spec;
          const bool none = req.is_none() || (py::isinstance<py::str>(req) && req.cast<std::string>() == "none");
          if (!none) spec = parse_device(req.cast<std::string>());
          const Decision d = engine.resolve(none ? nullptr : &spec, profile, state, *via_kind);
          py::dict r;
          r["requested"] = d.requested_str();
          r["resolved"] = d.resolved.str();
          r["resolved_type"] = kind_name(d.resolved.kind);
          r["resolved_index"] = d.resolved.effective_index();
          r["action"] = action_name(d.action);
          r["reason"] = reason_text(d.reason);
          r["cpu_override"] = state.cpu_override;
          r["simulated"] = profile.any_simulated();
          out.append(r);
        }
        return out;
      },
      py::arg("requests"), py::arg("host") = "", py::arg("policy") = "torchdevice", py::arg("cpu_override") = false,
      py::arg("allow_redirects") = "", py::arg("via") = "create", py::arg("hypothetical") = true,
      "Resolve requests in sequence against one policy state. host is a matrix host name or simulate spec.");

  m.def("autocast_device_type", [](const std::string& d) { return std::string(autocast_device_type(parse_device(d).kind)); });
  m.def("inference_context", [](const std::string& d) {
    return std::string(inference_context_name(inference_context_for(parse_device(d).kind)));
  });
  m.def("compile_eligible", [](const std::string& d) { return compile_eligibility(parse_device(d).kind).eligible; });
  m.def("require_distributed_supported", [](const std::string& d) {
    try {
      require_distributed_supported(parse_device(d).kind);
    } catch (const PolicyError& e) {
      throw std::runtime_error(e.what());
    }
  });

  m.def(
      "run_matrix",
      [](const std::string& path, const std::string& simulate) {
        const auto catalog = conformance::load_catalog(path);
        // The host as `crossdev run` prepares it: the sim backend is registered only when
        // `simulate` names a kind this host lacks, before any row starts autograd; with nothing
        // simulated the process is left as it is (runner/run_context.h).
        conformance::PreparedRun prepared;
        try {
          prepared = conformance::prepare_run(simulate);
        } catch (const std::invalid_argument& e) {
          throw py::value_error(std::string("simulate: ") + e.what());
        }
        if (!prepared.note.empty() && PyErr_WarnEx(PyExc_RuntimeWarning, ("crossdev: " + prepared.note).c_str(), 1) < 0)
          throw py::error_already_set();  // -W error
        const conformance::RunContext& ctx = prepared.ctx;
        py::list out;
        std::vector<conformance::CaseResult> results;
        {
          // Without the GIL: a candidate row may call a Python custom op (its kernel takes the GIL),
          // and the autograd engine refuses to run backward while the GIL is held.
          py::gil_scoped_release release;
          results = conformance::run_catalog(catalog, ctx);
        }
        for (const auto& r : results) {
          py::dict d;
          d["id"] = r.id;
          d["suite"] = r.suite;
          d["status"] = conformance::status_name(r.status);
          d["execution"] = conformance::execution_name(r.execution);
          d["device"] = r.device;
          d["message"] = r.message;
          out.append(d);
        }
        return out;
      },
      py::arg("path"), py::arg("simulate") = "",
      "Run matrix file(s) through the C++ harness; returns case dicts. An exception a Python op raises in a "
      "row is that case's error ('ValueError: ...'). Registers the sim backend only when `simulate` simulates a kind.");
}

}  // namespace crossdev::python
