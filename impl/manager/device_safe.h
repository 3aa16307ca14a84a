#pragma once
// device_safe(callable, inputs, options): seed 003's @device_safe_operation. Runs the call;
// on an error the classifier recognises, applies that category's next recovery stage and
// retries, at most max_attempts calls in all, recording every attempt. It
//   - rethrows an unclassified error unchanged (the same exception object);
//   - rethrows the last error unchanged when recoveries or attempts run out;
//   - retries nothing after an error that leaves the device unusable until the process restarts
//     (a sticky CUDA error): outcome needs_new_process, the error rethrown unchanged, and the
//     attempt's recovery_detail says what to do instead;
//   - never turns a wrong result into a silent success: a result that fails `validate`
//     throws RecoveryRejected, and every move, cast and device chain step that produced a result is
//     in the report (and the op log).
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "manager/error_classifier.h"
#include "manager/recovery.h"

namespace crossdev::manager {

// What the callable sees on each attempt.
struct AttemptContext {
  int attempt;               // 1-based
  DeviceSpec device;         // logical device of this attempt
  c10::Device storage;       // where its tensors live (cpu for simulated devices)
  std::optional<InferenceContext> inference;
  bool simulated;
};

using SafeFn = std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>& inputs, const AttemptContext& ctx)>;
// "" accepts the outputs; anything else is why they are wrong.
using ResultValidator = std::function<std::string(const std::vector<at::Tensor>& outputs, const AttemptContext& ctx)>;

struct SafeOptions {
  std::string op = "call";
  std::optional<DeviceSpec> device;            // where the first attempt runs (default: the inputs' first device, or cpu)
  int max_attempts = 3;
  std::optional<InferenceContext> inference;   // enter this context for every attempt (seed 001)
  bool allow_chain_steps = true;              // false: move_to_next_device and move_to_cpu cannot help
  const ErrorClassifier* classifier = nullptr; // default: ErrorClassifier::builtin()
  ResultValidator validate;
  ErrorDescriber describe;                     // extra exception describer (Python binding)
};

struct Attempt {
  int number = 0;
  DeviceSpec device;
  std::string inference;       // "inference_mode", "no_grad" or "" (caller's mode)
  std::string outcome;         // ok, error, rejected
  std::string error_type, error_message;
  std::string category;        // "" when unclassified
  std::string pattern;         // file:line of the pattern that matched
  std::vector<std::string> recovery;  // actions applied after this attempt
  std::string recovery_detail;
  double duration_us = 0;
};

struct SafeReport {
  std::string op;
  std::vector<Attempt> attempts;
  std::vector<MoveRecord> moves;
  std::vector<CastRecord> casts;
  std::vector<ChainStep> chain_steps;
  int cache_flushes = 0;
  DeviceSpec final_device;
  bool simulated = false;      // some attempt ran on a simulated device
  // ok (first try), recovered, rethrown (unclassified), exhausted (recoveries or attempts ran
  // out), recovery_failed (no recovery applicable), rejected (validate refused the result),
  // needs_new_process (the error left the device unusable in this process; nothing was retried)
  std::string outcome;
  std::string summary() const;  // one line per attempt
};

struct SafeResult {
  std::vector<at::Tensor> outputs;
  SafeReport report;
};

class RecoveryRejected : public std::runtime_error {
 public:
  RecoveryRejected(const std::string& why, SafeReport report)
      : std::runtime_error(why), report_(std::move(report)) {}
  const SafeReport& report() const noexcept { return report_; }

 private:
  SafeReport report_;
};

// `report_out` (optional) receives the report also when the call finally throws.
SafeResult device_safe(DeviceManager& manager, const SafeFn& fn, std::vector<Placed> inputs, const SafeOptions& options = {},
                       SafeReport* report_out = nullptr);

}  // namespace crossdev::manager
