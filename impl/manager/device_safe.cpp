#include "manager/device_safe.h"

#include <chrono>
#include <map>

#include "manager/fault_injection.h"
#include "manager/op_log.h"

namespace crossdev::manager {
namespace {

ErrorInfo describe(const SafeOptions& options, std::exception_ptr error) {
  ErrorInfo info;
  if (options.describe && options.describe(error, info)) return info;
  return describe_exception(error);
}

std::vector<at::Tensor> run_in_context(const SafeFn& fn, const std::vector<at::Tensor>& inputs, const AttemptContext& ctx) {
  if (!ctx.inference) return fn(inputs, ctx);
  if (*ctx.inference == InferenceContext::InferenceMode) {
    c10::InferenceMode guard;
    return fn(inputs, ctx);
  }
  c10::NoGradGuard guard;
  return fn(inputs, ctx);
}

DeviceSpec first_device(const std::vector<Placed>& inputs) {
  return inputs.empty() ? DeviceSpec::of(DeviceKind::CPU) : inputs.front().device;
}

bool ends_recovery(const RecoveryStage& stage) {
  for (const auto& action : stage)
    if (find_recovery(action)->ends_recovery) return true;
  return false;
}

}  // namespace

std::string SafeReport::summary() const {
  std::string out;
  for (const auto& a : attempts) {
    out += "attempt " + std::to_string(a.number) + " on " + a.device.str() + ": " + a.outcome;
    if (!a.category.empty()) out += " [" + a.category + "]";
    else if (a.outcome == "error") out += " [unclassified]";
    if (!a.recovery.empty()) {
      out += " -> ";
      for (std::size_t i = 0; i < a.recovery.size(); ++i) out += (i ? "+" : "") + a.recovery[i];
      out += ": " + a.recovery_detail;
    } else if (!a.recovery_detail.empty()) {
      out += " -> " + a.recovery_detail;  // why nothing was applied (needs_new_process, recovery_failed)
    }
    out += "\n";
  }
  return out + "outcome: " + outcome;
}

SafeResult device_safe(DeviceManager& manager, const SafeFn& fn, std::vector<Placed> inputs, const SafeOptions& options,
                       SafeReport* report_out) {
  if (options.max_attempts < 1) throw std::invalid_argument("device_safe: max_attempts must be >= 1");
  const ErrorClassifier& classifier = options.classifier ? *options.classifier : ErrorClassifier::builtin();
  const DeviceSpec start = options.device.value_or(first_device(inputs));
  manager.require_present(start);
  AttemptState state{manager, std::move(inputs), start, options.inference, options.allow_chain_steps, {}, {}, {}, {}};
  SafeReport report;
  report.op = options.op;
  std::map<std::string, std::size_t> next_stage;  // per category: index of its next recovery stage

  const auto finish = [&](const std::string& outcome) {
    report.outcome = outcome;
    report.moves = state.moves;
    report.casts = state.casts;
    report.chain_steps = state.chain_steps;
    report.cache_flushes = static_cast<int>(state.cache_flushes.size());
    report.final_device = state.device;
    if (report_out) *report_out = report;
  };

  for (int number = 1;; ++number) {
    Attempt attempt;
    attempt.number = number;
    attempt.device = state.device;
    attempt.inference = state.inference ? inference_context_name(*state.inference) : "";
    const bool simulated = manager.is_simulated(state.device);
    report.simulated = report.simulated || simulated;
    const AttemptContext ctx{number, state.device, manager.storage_device(state.device), state.inference, simulated};
    const auto begin = std::chrono::steady_clock::now();
    const auto elapsed_us = [&] {
      return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - begin).count();
    };
    std::exception_ptr error;
    std::vector<at::Tensor> outputs;
    try {
      // The fault point sits inside the attempt's inference context, like the op it stands for.
      outputs = run_in_context(
          [&](const std::vector<at::Tensor>& in, const AttemptContext& c) {
            fault_point(FaultContext{options.op, c.device, state.inputs});
            return fn(in, c);
          },
          tensors_of(state.inputs), ctx);
    } catch (...) {
      error = std::current_exception();
    }
    attempt.duration_us = elapsed_us();

    if (!error) {
      std::string why;
      if (options.validate) why = options.validate(outputs, ctx);
      attempt.outcome = why.empty() ? "ok" : "rejected";
      report.attempts.push_back(attempt);
      ScopedOp op("attempt", options.op, state.device.str());
      op.outcome(attempt.outcome);
      op.field("attempt", std::to_string(number));
      if (!why.empty()) {
        op.field("reason", why);
        finish("rejected");
        throw RecoveryRejected("device_safe(" + options.op + "): result rejected after " + std::to_string(number) +
                                   " attempt(s): " + why,
                               report);
      }
      finish(number == 1 ? "ok" : "recovered");
      return SafeResult{std::move(outputs), report};
    }

    const ErrorInfo info = describe(options, error);
    attempt.outcome = "error";
    attempt.error_type = info.type;
    attempt.error_message = info.message;
    const auto cls = classifier.classify(info);
    ScopedOp op("attempt", options.op, state.device.str());
    op.outcome("error");
    op.field("attempt", std::to_string(number));
    op.field("error_type", info.type);
    op.field("error", info.message.substr(0, 200));
    if (!cls) {
      report.attempts.push_back(attempt);
      op.field("category", "unclassified");
      finish("rethrown");
      std::rethrow_exception(error);
    }
    attempt.category = cls->category->name;
    attempt.pattern = cls->pattern->where;
    op.field("category", attempt.category);
    std::size_t& stage_index = next_stage[attempt.category];
    const auto& stages = cls->category->recovery;
    // An error that needs a new process says so whatever max_attempts allows: it is never "exhausted".
    const bool ends = stage_index < stages.size() && ends_recovery(stages[stage_index]);
    if (!ends && (number >= options.max_attempts || stage_index >= stages.size())) {
      report.attempts.push_back(attempt);
      op.field("reason", number >= options.max_attempts ? "max_attempts reached" : "no recovery stage left");
      finish("exhausted");
      std::rethrow_exception(error);
    }
    const RecoveryStage& stage = stages[stage_index++];
    try {
      for (const auto& action : stage) {
        const std::string detail = find_recovery(action)->apply(state, info, attempt.category);
        attempt.recovery.push_back(action);
        attempt.recovery_detail += (attempt.recovery_detail.empty() ? "" : "; ") + detail;
        ScopedOp rec("recovery", action, state.device.str());
        rec.field("category", attempt.category);
        rec.field("reason", detail);
      }
    } catch (const ProcessRestartRequired& why) {  // nothing in this process can help: no retry
      attempt.recovery_detail = why.what();
      report.attempts.push_back(attempt);
      op.field("reason", why.what());
      finish("needs_new_process");
      std::rethrow_exception(error);
    } catch (const std::exception& why) {  // RecoveryImpossible, or a recovery that itself failed
      attempt.recovery_detail += (attempt.recovery_detail.empty() ? "" : "; ") + std::string("not applicable: ") + why.what();
      report.attempts.push_back(attempt);
      op.field("reason", why.what());
      finish("recovery_failed");
      std::rethrow_exception(error);
    }
    op.field("reason", attempt.recovery_detail);
    report.attempts.push_back(attempt);
  }
}

}  // namespace crossdev::manager
