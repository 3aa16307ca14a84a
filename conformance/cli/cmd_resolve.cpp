// crossdev resolve SPEC... [--simulate S] [--policy P] [--via V] [--json]
// Resolves the requests in order against one state, so "cpu:-1" toggling is visible.
#include <iostream>

#include "cli/commands.h"
#include "cli/host_option.h"
#include "policy/redirect_policy.h"
#include "util/json.h"

namespace crossdev::cli {

int cmd_resolve(const std::vector<std::string>& argv) {
  static const std::vector<OptionSpec> kOptions = {
      kSimulateOption,
      {"--policy", "P", "preference preset (default: torchdevice)"},
      {"--via", "V", "create | to | implicit (default: create)"},
      {"--json", nullptr, "print JSON lines instead of text"},
      {"--help", nullptr, "show this help"}};
  const ParsedArgs args = parse_args(argv, kOptions);
  if (args.has("--help")) {
    std::cout << "usage: crossdev resolve SPEC... [--simulate S] [--policy P] [--json]\n\n"
                 "Resolves each device request (\"cuda:1\", \"cpu:-1\", \"tpu\", or \"none\" for no device) in "
                 "order,\nthrough seed 002's redirect policy. Presets: "
              << preset_names() << ".\n\n" << format_options(kOptions);
    return kExitPass;
  }
  if (args.positional.empty()) throw UsageError("resolve needs at least one SPEC (e.g. cuda:0, cpu:-1, none)");
  const Preset* preset = find_preset(args.get("--policy", default_preset().name));
  if (!preset) throw UsageError("unknown policy '" + args.get("--policy") + "'; expected one of " + preset_names());
  const auto via = via_from_name(args.get("--via", "create"));
  if (!via) throw UsageError("unknown --via '" + args.get("--via") + "'; expected create, to or implicit");

  std::vector<DeviceSpec> requests(args.positional.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const std::string& text = args.positional[i];
    if (text == "none") continue;
    std::string error;
    if (try_parse_device(text, requests[i], &error) != ParseStatus::Ok) throw UsageError(error);
  }
  const HostProfile host = host_for(args);
  RedirectPolicy policy(*preset);
  PolicyState state = PolicyState::from_env(*preset);
  if (!args.has("--json")) {
    std::cout << "host: " << host.summary() << (host.any_simulated() ? "  [SIMULATED]" : "") << "; policy: " << preset->name
              << (state.redirects_enabled ? "" : " (redirects disabled)") << "\n";
  }
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const bool none = args.positional[i] == "none";
    const Decision d = policy.resolve(none ? nullptr : &requests[i], host, state, *via);
    if (args.has("--json")) {
      json::Writer w(0);
      w.begin_object().field("requested", d.requested_str()).field("resolved", d.resolved.str())
          .field("action", action_name(d.action)).field("reason", reason_text(d.reason)).field("via", via_name(d.via))
          .field("policy", preset->name).field("simulated", host.any_simulated()).field("cpu_override", state.cpu_override)
          .end_object();
      std::cout << w.str() << "\n";
    } else {
      std::cout << d.describe() << "\n";
    }
  }
  return kExitPass;
}

}  // namespace crossdev::cli
