#pragma once
// --simulate S (or CROSSDEV_SIMULATE) applied to the real probe, shared by every command.
#include <string>

#include "cli/args.h"
#include "device/host_profile.h"

namespace crossdev::cli {

inline constexpr OptionSpec kSimulateOption{"--simulate", "S",
                                            "simulate device kinds the host lacks, e.g. \"cuda:2,mps\" "
                                            "(default: $CROSSDEV_SIMULATE)"};

std::string simulate_spec(const ParsedArgs& args);
HostProfile host_for(const ParsedArgs& args);  // throws UsageError on a bad spec

}  // namespace crossdev::cli
