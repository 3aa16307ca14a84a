#include "cli/host_option.h"

#include <stdexcept>

#include "runner/python_runtimes.h"

namespace crossdev::cli {

std::string simulate_spec(const ParsedArgs& args) {
  return args.has("--simulate") ? args.get("--simulate") : simulate_from_env();
}

HostProfile host_for(const ParsedArgs& args) {
  try {
    HostProfile host = HostProfile::probe_with_simulation(simulate_spec(args));
    conformance::attach_python_runtimes(host);  // torch_xla's xla (runner/python_runtimes.h)
    return host;
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

}  // namespace crossdev::cli
