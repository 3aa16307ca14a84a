#include "cli/host_option.h"

#include <stdexcept>

namespace crossdev::cli {

std::string simulate_spec(const ParsedArgs& args) {
  return args.has("--simulate") ? args.get("--simulate") : simulate_from_env();
}

HostProfile host_for(const ParsedArgs& args) {
  try {
    return HostProfile::probe_with_simulation(simulate_spec(args));
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

}  // namespace crossdev::cli
