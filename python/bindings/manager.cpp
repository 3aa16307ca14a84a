// crossdev.manager: the DeviceManager API, the error classifier, device_safe with fault
// injection, streams/events, checkpoints and the device-operation log, from Python.
//
//   m = crossdev.manager.DeviceManager("mps")          # a named host / simulate spec, or "this"
//   r = m.device_safe(fn, [a, b], device="mps", faults=[{"device": "mps", "text": "..."}])
//   r["outputs"], r["report"]["attempts"], r["report"]["outcome"]
//
// Tensors cross as torch.Tensor. On a simulated device the data stays on the cpu and the
// returned `devices` list says where each tensor is from the program's point of view.
#include <torch/extension.h>

#include "manager/checkpoint.h"
#include "manager/device_safe.h"
#include "manager/error_triggers.h"
#include "manager/fault_injection.h"
#include "manager/op_log.h"
#include "manager/stream_event.h"

namespace py = pybind11;

namespace crossdev::python {
namespace {

using namespace crossdev::manager;

DeviceSpec device_arg(const std::string& text) { return canonical_device(parse_device(text)); }

py::dict caps_dict(const Capabilities& c) {
  py::dict d;
  d["device"] = c.device.str();
  d["simulated"] = c.simulated;
  py::list unsupported;
  for (auto t : c.unsupported_dtypes) unsupported.append(dtype_name(t));
  d["unsupported_dtypes"] = unsupported;
  d["compile_supported"] = c.compile_supported;
  d["compile_reason"] = c.compile_reason;
  d["distributed_supported"] = c.distributed_supported;
  d["distributed_reason"] = c.distributed_reason;
  d["inference_context"] = inference_context_name(c.inference_context);
  d["low_precision"] = dtype_name(c.low_precision);
  d["low_precision_reason"] = c.low_precision_reason;
  return d;
}

py::dict props_dict(const UnifiedProperties& p) {
  py::dict d;
  d["name"] = p.name;
  d["device"] = p.device.str();
  d["total_memory"] = p.total_memory;
  d["major"] = p.major;
  d["minor"] = p.minor;
  d["multi_processor_count"] = p.multiprocessor_count;
  d["simulated"] = p.simulated;
  d["source"] = p.source;
  return d;
}

// One dict per record, filled by fill(dict, record).
template <typename Record, typename Fill>
py::list dict_list(const std::vector<Record>& records, const Fill& fill) {
  py::list out;
  for (const Record& record : records) {
    py::dict d;
    fill(d, record);
    out.append(d);
  }
  return out;
}

py::list moves_list(const std::vector<MoveRecord>& moves) {
  return dict_list(moves, [](py::dict& d, const MoveRecord& m) {
    d["index"] = m.index;
    d["from"] = m.from.str();
    d["to"] = m.to.str();
    d["reason"] = m.reason;
    d["simulated"] = m.simulated;
  });
}

py::list casts_list(const std::vector<CastRecord>& casts) {
  return dict_list(casts, [](py::dict& d, const CastRecord& c) {
    d["index"] = c.index;
    d["from"] = dtype_name(c.from);
    d["to"] = dtype_name(c.to);
    d["reason"] = c.reason;
  });
}

py::dict report_dict(const SafeReport& r) {
  py::dict d;
  d["op"] = r.op;
  d["outcome"] = r.outcome;
  d["final_device"] = r.final_device.str();
  d["simulated"] = r.simulated;
  d["cache_flushes"] = r.cache_flushes;
  d["moves"] = moves_list(r.moves);
  d["casts"] = casts_list(r.casts);
  d["chain_steps"] = dict_list(r.chain_steps, [](py::dict& s, const auto& step) {
    s["from"] = step.from.str();
    s["to"] = step.to.str();
    s["reason"] = step.reason;
  });
  d["attempts"] = dict_list(r.attempts, [](py::dict& x, const auto& a) {
    x["number"] = a.number;
    x["device"] = a.device.str();
    x["inference"] = a.inference;
    x["outcome"] = a.outcome;
    x["error_type"] = a.error_type;
    x["error_message"] = a.error_message;
    x["category"] = a.category.empty() ? py::object(py::none()) : py::object(py::str(a.category));
    x["pattern"] = a.pattern;
    x["recovery"] = a.recovery;
    x["recovery_detail"] = a.recovery_detail;
    x["duration_us"] = a.duration_us;
  });
  d["summary"] = r.summary();
  return d;
}

std::vector<Placed> placed_from(DeviceManager& m, const std::vector<at::Tensor>& tensors, const py::object& devices) {
  if (devices.is_none()) return place_as_is(tensors);
  std::vector<DeviceSpec> specs;
  for (const auto& d : devices.cast<std::vector<std::string>>()) specs.push_back(device_arg(d));
  return place_on(m, tensors, specs);
}

py::dict placed_dict(const std::vector<Placed>& placed) {
  py::list tensors, devices;
  for (const auto& p : placed) {
    tensors.append(p.tensor);
    devices.append(p.device.str());
  }
  py::dict d;
  d["tensors"] = tensors;
  d["devices"] = devices;
  return d;
}

std::optional<InferenceContext> inference_arg(const py::object& value) {
  if (value.is_none()) return std::nullopt;
  const auto text = value.cast<std::string>();
  if (text == "inference_mode") return InferenceContext::InferenceMode;
  if (text == "no_grad") return InferenceContext::NoGrad;
  throw py::value_error("inference: expected None, 'inference_mode' or 'no_grad', got '" + text + "'");
}

FaultPlan plan_from(const py::object& faults) {
  FaultPlan plan;
  if (faults.is_none()) return plan;
  for (const auto& item : faults.cast<py::list>()) {
    const auto spec = item.cast<py::dict>();
    Fault f;
    for (const auto& kv : spec) {
      const auto key = kv.first.cast<std::string>();
      if (key == "site") f.site = kv.second.cast<std::string>();
      else if (key == "device") {
        const auto kind = kind_from_name(kv.second.cast<std::string>());
        if (!kind) throw py::value_error("fault 'device': unknown device kind '" + kv.second.cast<std::string>() + "'");
        f.device = *kind;
      } else if (key == "when") f.when = kv.second.cast<std::vector<std::string>>();
      else if (key == "times") f.times = kv.second.cast<int>();
      else if (key == "type") f.type = kv.second.cast<std::string>();
      else if (key == "text") f.text = kv.second.cast<std::string>();
      else throw py::value_error("fault: unknown key '" + key + "'; expected site, device, when, times, type, text");
    }
    if (f.text.empty()) throw py::value_error("fault: 'text' (the verbatim error) is required");
    try {
      plan.add(std::move(f));
    } catch (const std::invalid_argument& e) {
      throw py::value_error(e.what());
    }
  }
  return plan;
}

// Python exceptions raised inside the callable reach device_safe as error_already_set; the
// classifier sees their Python type name and str(), exactly what a user would see.
bool describe_python(std::exception_ptr error, ErrorInfo& out) {
  try {
    std::rethrow_exception(error);
  } catch (py::error_already_set& e) {
    py::gil_scoped_acquire gil;
    out.type = py::str(e.type().attr("__name__"));
    out.message = py::str(e.value());
    return true;
  } catch (...) {
    return false;
  }
}

std::vector<at::Tensor> outputs_from(const py::object& result) {
  if (py::isinstance<at::Tensor>(result) || THPVariable_Check(result.ptr())) return {result.cast<at::Tensor>()};
  return result.cast<std::vector<at::Tensor>>();
}

class PyDeviceManager {
 public:
  PyDeviceManager(const std::string& host, const py::object& policy, const py::object& chain) : manager_(make(host, policy, chain)) {}

  DeviceManager& get() { return manager_; }

 private:
  static DeviceManager make(const std::string& host, const py::object& policy, const py::object& chain) {
    HostProfile profile;
    try {
      profile = host == "this" ? HostProfile::probe_with_simulation(simulate_from_env()) : HostProfile::named_or_spec(host);
    } catch (const std::invalid_argument& e) {
      throw py::value_error(e.what());
    }
    ManagerConfig config;
    if (!policy.is_none()) {
      const Preset* p = find_preset(policy.cast<std::string>());
      if (!p) throw py::value_error("unknown policy '" + policy.cast<std::string>() + "'; expected one of " + preset_names());
      config.policy = p;
      config.detect = p;
    }
    if (!chain.is_none()) {
      try {
        config.chain = DeviceChain::parse(chain.cast<std::string>());
      } catch (const std::invalid_argument& e) {
        throw py::value_error(e.what());
      }
    }
    return DeviceManager(std::move(profile), config);
  }
  DeviceManager manager_;
};

template <class F>
auto value_errors(F f) -> decltype(f()) {
  try {
    return f();
  } catch (const DeviceSpecError& e) {
    throw py::value_error(e.what());
  } catch (const std::invalid_argument& e) {
    throw py::value_error(e.what());
  }
}

void bind_device_manager(py::module_& mm) {
  py::class_<PyDeviceManager>(mm, "DeviceManager", "One API over every device kind (real or simulated)")
      .def(py::init<const std::string&, const py::object&, const py::object&>(), py::arg("host") = "this",
           py::arg("policy") = py::none(), py::arg("chain") = py::none(),
           "host: a named host ('mps', 'cuda+mps', ...), a simulate spec, or 'this' (real probe + CROSSDEV_SIMULATE)")
      .def("host_summary", [](PyDeviceManager& self) { return self.get().host().summary(); })
      .def("capabilities", [](PyDeviceManager& self, const std::string& d) {
        return value_errors([&] { return caps_dict(self.get().capabilities(device_arg(d))); });
      })
      .def("memory_stats", [](PyDeviceManager& self, const std::string& d) {
        return value_errors([&] { return self.get().memory_stats(device_arg(d)); });
      })
      .def("empty_cache", [](PyDeviceManager& self, const std::string& d) {
        return value_errors([&] {
          const EmptyCacheResult r = self.get().empty_cache(device_arg(d));
          py::dict out;
          out["supported"] = r.supported;
          out["released"] = r.released;
          out["detail"] = r.detail;
          return out;
        });
      })
      .def("properties", [](PyDeviceManager& self, const std::string& d) {
        return value_errors([&] { return props_dict(self.get().properties(device_arg(d))); });
      })
      .def("auto_detect", [](PyDeviceManager& self) {
        const auto d = self.get().auto_detect();
        py::dict out;
        out["device"] = d.device.str();
        out["reason"] = d.reason;
        return out;
      })
      .def("ensure_device",
           [](PyDeviceManager& self, const std::vector<at::Tensor>& tensors, const py::object& devices, const py::object& target) {
             return value_errors([&] {
               std::vector<Placed> placed = placed_from(self.get(), tensors, devices);
               std::optional<DeviceSpec> t;
               if (!target.is_none()) t = parse_device(target.cast<std::string>());
               const DeviceConsistency c = ensure_device(self.get(), placed, t ? &*t : nullptr);
               py::dict out = placed_dict(placed);
               out["target"] = c.target.str();
               out["decision"] = c.decision.describe();
               out["moves"] = moves_list(c.moves);
               return out;
             });
           },
           py::arg("tensors"), py::arg("devices") = py::none(), py::arg("target") = py::none())
      .def("ensure_dtype",
           [](PyDeviceManager& self, const std::vector<at::Tensor>& tensors, const py::object& devices, bool unify) {
             return value_errors([&] {
               std::vector<Placed> placed = placed_from(self.get(), tensors, devices);
               DtypeOptions options;
               options.unify = unify;
               const auto casts = ensure_dtype(self.get(), placed, options);
               py::dict out = placed_dict(placed);
               out["casts"] = casts_list(casts);
               return out;
             });
           },
           py::arg("tensors"), py::arg("devices") = py::none(), py::arg("unify") = false)
      .def("device_safe",
           [](PyDeviceManager& self, const py::function& fn, const std::vector<at::Tensor>& tensors, const py::object& devices,
              const py::object& device, const std::string& op, int max_attempts, const py::object& inference, bool allow_chain_steps,
              const py::object& validate, const py::object& faults) {
             DeviceManager& m = self.get();
             std::vector<Placed> placed = value_errors([&] { return placed_from(m, tensors, devices); });
             SafeOptions options;
             options.op = op;
             if (!device.is_none()) options.device = value_errors([&] { return device_arg(device.cast<std::string>()); });
             options.max_attempts = max_attempts;
             options.inference = inference_arg(inference);
             options.allow_chain_steps = allow_chain_steps;
             options.describe = describe_python;
             if (!validate.is_none()) {
               options.validate = [validate](const std::vector<at::Tensor>& out, const AttemptContext&) {
                 const py::object why = validate(out);
                 return why.is_none() ? std::string() : why.cast<std::string>();
               };
             }
             const SafeFn call = [&fn](const std::vector<at::Tensor>& in, const AttemptContext& ctx) {
               py::dict c;
               c["attempt"] = ctx.attempt;
               c["device"] = ctx.device.str();
               c["storage"] = ctx.storage.str();
               c["inference"] = ctx.inference ? py::object(py::str(inference_context_name(*ctx.inference))) : py::object(py::none());
               c["simulated"] = ctx.simulated;
               return outputs_from(fn(in, c));
             };
             FaultPlan plan = plan_from(faults);
             ScopedFaultPlan scoped(plan);
             SafeReport report;
             try {
               SafeResult r = device_safe(m, call, std::move(placed), options, &report);
               py::dict out;
               out["outputs"] = r.outputs;
               out["report"] = report_dict(r.report);
               out["faults_fired"] = plan.fired();
               return out;
             } catch (const RecoveryRejected& e) {
               py::module_::import("crossdev").attr("_last_report") = report_dict(e.report());
               throw;
             } catch (py::error_already_set& e) {
               py::module_::import("crossdev").attr("_last_report") = report_dict(report);
               // Still the same object; an error that needs a new process gets a note (PEP 678)
               // saying so, since the traceback is what a user reads, not _last_report.
               if (report.outcome == "needs_new_process" && !report.attempts.empty() && py::hasattr(e.value(), "add_note"))
                 e.value().attr("add_note")("crossdev device_safe: " + report.attempts.back().recovery_detail);
               throw;
             } catch (...) {
               // The original exception leaves unchanged; its report stays inspectable.
               py::module_::import("crossdev").attr("_last_report") = report_dict(report);
               throw;
             }
           },
           py::arg("fn"), py::arg("tensors"), py::arg("devices") = py::none(), py::arg("device") = py::none(),
           py::arg("op") = "call", py::arg("max_attempts") = 3, py::arg("inference") = py::none(),
           py::arg("allow_chain_steps") = true, py::arg("validate") = py::none(), py::arg("faults") = py::none(),
           "Run fn(inputs, ctx) with classification and recovery. Returns {'outputs', 'report', 'faults_fired'}; "
           "on failure the original exception propagates and crossdev._last_report holds the report; after an error "
           "that needs a new process (outcome needs_new_process) nothing is retried and the exception carries a note "
           "saying what to do.")
      .def("save_checkpoint",
           [](PyDeviceManager& self, const std::string& path, const py::dict& tensors) {
             value_errors([&] {
               std::vector<CheckpointTensor> items;
               for (const auto& kv : tensors) {
                 const auto name = kv.first.cast<std::string>();
                 const auto pair = kv.second.cast<py::tuple>();
                 items.push_back({name, place_on(self.get(), {pair[0].cast<at::Tensor>()}, {device_arg(pair[1].cast<std::string>())})[0]});
               }
               save_checkpoint(path, items);
               return 0;
             });
           },
           py::arg("path"), py::arg("tensors"), "tensors: {name: (tensor, device)}")
      .def("load_checkpoint",
           [](PyDeviceManager& self, const std::string& path, const std::string& map_location) {
             return value_errors([&] {
               py::dict out;
               for (const auto& t : load_checkpoint(self.get(), path, MapLocation::parse(map_location))) {
                 py::dict d;
                 d["tensor"] = t.value.tensor;
                 d["device"] = t.value.device.str();
                 d["saved_device"] = t.saved_device.str();
                 d["reason"] = t.placement_reason;
                 d["casts"] = casts_list(t.casts);
                 out[py::str(t.name)] = d;
               }
               return out;
             });
           },
           py::arg("path"), py::arg("map_location") = "policy");
}

void bind_streams(py::module_& mm) {
  // Streams and events keep a pointer to their manager's host; keep the manager alive.
  py::class_<Stream>(mm, "Stream")
      .def(py::init([](PyDeviceManager& m, const std::string& d) { return value_errors([&] { return Stream(m.get(), device_arg(d)); }); }),
           py::arg("manager"), py::arg("device"), py::keep_alive<1, 2>())
      .def_property_readonly("device", [](const Stream& s) { return s.device().str(); })
      .def_property_readonly("emulated", &Stream::emulated)
      .def("query", &Stream::query)
      .def("synchronize", &Stream::synchronize)
      .def("wait_event", &Stream::wait_event)
      .def("wait_stream", &Stream::wait_stream);
  py::class_<Event>(mm, "Event")
      .def(py::init([](PyDeviceManager& m, const std::string& d, bool timing) {
             return value_errors([&] { return Event(m.get(), device_arg(d), timing); });
           }),
           py::arg("manager"), py::arg("device"), py::arg("enable_timing") = false, py::keep_alive<1, 2>())
      .def_property_readonly("device", [](const Event& e) { return e.device().str(); })
      .def_property_readonly("emulated", &Event::emulated)
      .def_property_readonly("recorded", &Event::recorded)
      .def("record", &Event::record)
      .def("query", &Event::query)
      .def("synchronize", &Event::synchronize)
      .def("elapsed_time", &Event::elapsed_time);
}

void bind_errors(py::module_& mm) {
  mm.def("classify",
         [](const std::string& text, const std::string& exception) -> py::object {
           const auto cls = ErrorClassifier::builtin().classify({exception, text});
           if (!cls) return py::none();
           py::dict d;
           d["category"] = cls->category->name;
           d["pattern"] = cls->pattern->where;
           d["source"] = cls->pattern->source;
           py::list stages;
           for (const auto& s : cls->category->recovery) stages.append(s);
           d["recovery"] = stages;
           return d;
         },
         py::arg("text"), py::arg("exception") = "RuntimeError", "Category of an error text, or None when unclassified.");
  mm.def("error_categories", [] {
    py::list out;
    for (const auto& c : ErrorClassifier::builtin().categories()) {
      py::dict d;
      d["name"] = c.name;
      d["description"] = c.description;
      py::list stages;
      for (const auto& s : c.recovery) stages.append(s);
      d["recovery"] = stages;
      d["source"] = c.source;
      out.append(d);
    }
    return out;
  });
  mm.def("recovery_actions", [] {
    py::dict out;
    for (const auto& a : recovery_actions()) out[py::str(a.name)] = a.description;
    return out;
  });
  mm.def("error_triggers", [] {
    py::dict out;
    for (const auto& t : error_triggers()) out[py::str(t.name)] = t.what;
    return out;
  });
  mm.def("fire_trigger",
         [](const std::string& name) {
           const ErrorTrigger* t = find_error_trigger(name);
           if (!t) throw py::value_error("unknown trigger '" + name + "'; expected one of " + error_trigger_list());
           t->fire();
         },
         "Make LibTorch raise one of the real errors of error_triggers() (translated by torch to its Python type).");
}

void bind_op_log(py::module_& mm) {
  mm.def("op_log_summary", [] { return OpLog::global().summary_json(); }, "JSON summary for the bundle's device_log");
  mm.def("op_log_entries", [] {
    py::list out;
    for (const auto& e : OpLog::global().entries()) out.append(OpLog::entry_json(e));
    return out;
  }, "Every entry as one JSON line (str)");
  mm.def("op_log_clear", [] { OpLog::global().clear(); });
  mm.def("set_device_log", [](const std::string& path) { OpLog::global().set_jsonl_path(path); }, py::arg("path"),
         "Append every entry as a JSON line to path ('' stops)");
}

}  // namespace

void bind_manager(py::module_& m) {
  py::module_ mm = m.def_submodule("manager", "DeviceManager, error classification and recovery, streams/events (seeds 001-004)");
  bind_device_manager(mm);
  bind_streams(mm);
  bind_errors(mm);
  bind_op_log(mm);
}

}  // namespace crossdev::python
