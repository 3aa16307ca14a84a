// crossdev devices [--simulate S] [--json]: what this host has, real or simulated.
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/host_option.h"
#include "runner/python_runtimes.h"
#include "util/json.h"

namespace crossdev::cli {

int cmd_devices(const std::vector<std::string>& argv) {
  static const std::vector<OptionSpec> kOptions = {
      kSimulateOption, {"--json", nullptr, "print JSON instead of text"}, {"--help", nullptr, "show this help"}};
  const ParsedArgs args = parse_args(argv, kOptions);
  if (args.has("--help")) {
    std::cout << "usage: crossdev devices [--simulate S] [--json]\n\nLists the device kinds this host has, each "
                 "labelled real or simulated, and each Python runtime (torch_xla) that is absent, with why.\n\n"
              << format_options(kOptions);
    return kExitPass;
  }
  if (!args.positional.empty()) throw UsageError("unexpected argument '" + args.positional[0] + "'");
  const HostProfile host = host_for(args);
  if (args.has("--json")) {
    json::Writer w;
    w.begin_object().field("source", host.source()).field("simulated", host.any_simulated());
    w.key("devices").begin_array();
    for (DeviceKind kind : kAllDeviceKinds) {
      const auto& p = host.presence(kind);
      if (p.count == 0) continue;
      w.begin_object().field("kind", kind_name(kind)).field("count", p.count).field("provenance", provenance_name(p.provenance));
      w.key("properties").begin_array();
      for (const auto& d : p.devices) {
        w.begin_object().field("name", d.name).field("total_memory", d.total_memory).field("major", d.major)
            .field("minor", d.minor).field("multiprocessor_count", d.multiprocessor_count).end_object();
      }
      w.end_array().end_object();
    }
    w.end_array();
    // Device kinds whose runtime is a Python package (torch_xla): real or absent, and why (runner/python_runtimes.h).
    w.key("python_runtimes").begin_array();
    for (const auto& r : conformance::python_runtime_reports()) {
      w.begin_object().field("kind", kind_name(r.kind)).field("status", r.real ? "real" : "absent");
      w.field("summary", r.summary).field("reason", r.reason).end_object();
    }
    w.end_array().end_object();
    std::cout << w.str() << "\n";
    return kExitPass;
  }
  std::cout << "host profile: " << host.source() << (host.any_simulated() ? " (includes SIMULATED devices)" : "") << "\n";
  for (DeviceKind kind : kAllDeviceKinds) {
    const auto& p = host.presence(kind);
    if (p.count == 0) continue;
    std::printf("  %-5s x%-3d %s\n", kind_name(kind), p.count, provenance_name(p.provenance));
    for (const auto& d : p.devices) std::printf("        - %s\n", d.name.c_str());
  }
  for (const auto& r : conformance::python_runtime_reports())
    if (!r.real) std::printf("  %-5s absent: %s\n", kind_name(r.kind), r.reason.c_str());
  return kExitPass;
}

}  // namespace crossdev::cli
