#pragma once
// Recovery actions (seed 003's strategies) as a table. Each action changes the state of the
// next attempt — where it runs, what its inputs are, which inference context it enters — and
// returns a one-line account of what it did. An action that cannot help (moving on from
// cpu, a cast with nothing to cast) throws RecoveryImpossible, and device_safe then rethrows
// the original error unchanged. An action that ends recovery (restart_process) throws
// ProcessRestartRequired: the error left the device unusable for the rest of the process, so no
// retry in this process can succeed, and device_safe stops with outcome needs_new_process.
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "manager/consistency.h"
#include "manager/error_info.h"

namespace crossdev::manager {

class RecoveryImpossible : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// what() tells the user what to do instead of a retry (start a new process; how to find the cause).
class ProcessRestartRequired : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct AttemptState {
  DeviceManager& manager;
  std::vector<Placed> inputs;
  DeviceSpec device;                          // where the next attempt runs
  std::optional<InferenceContext> inference;  // context each attempt enters, if any
  bool allow_chain_steps = true;  // move_to_next_device and move_to_cpu may run
  std::vector<MoveRecord> moves;
  std::vector<CastRecord> casts;
  std::vector<ChainStep> chain_steps;
  std::vector<EmptyCacheResult> cache_flushes;
};

struct RecoveryAction {
  const char* name;
  const char* description;
  std::string (*apply)(AttemptState& state, const ErrorInfo& error, const std::string& category);
  // Always throws ProcessRestartRequired; must be its category's only stage (the table loader checks).
  bool ends_recovery;
};

const RecoveryAction* find_recovery(std::string_view name);
std::string recovery_action_list();
const std::vector<RecoveryAction>& recovery_actions();

}  // namespace crossdev::manager
