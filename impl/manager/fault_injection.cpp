#include "manager/fault_injection.h"

#include "util/named_table.h"

#include <c10/core/InferenceMode.h>

#include "manager/op_log.h"

namespace crossdev::manager {
namespace {

thread_local FaultPlan* t_active_plan = nullptr;

// Conditions as data: each names the state in which the real error arises.
struct Condition {
  const char* name;
  const char* meaning;
  bool (*holds)(const FaultContext&);
};

bool any_dtype(const FaultContext& ctx, c10::ScalarType dtype) {
  for (const auto& p : ctx.inputs)
    if (p.tensor.scalar_type() == dtype) return true;
  return false;
}

const Condition kConditions[] = {
    {"mixed_devices", "inputs are on more than one device",
     [](const FaultContext& ctx) { return !ctx.inputs.empty() && !same_device(ctx.inputs); }},
    {"mixed_dtypes", "inputs have more than one dtype",
     [](const FaultContext& ctx) {
       for (const auto& p : ctx.inputs)
         if (p.tensor.scalar_type() != ctx.inputs.front().tensor.scalar_type()) return true;
       return false;
     }},
    {"float64_input", "an input is float64", [](const FaultContext& ctx) { return any_dtype(ctx, c10::ScalarType::Double); }},
    {"inference_mode", "the call runs under torch.inference_mode()",
     [](const FaultContext&) { return c10::InferenceMode::is_enabled(); }},
};

const Condition* find_condition(const std::string& name) {
  return named::find(kConditions, name);
}

}  // namespace

FaultPlan::FaultPlan(std::vector<Fault> faults) {
  for (auto& f : faults) add(std::move(f));
}

void FaultPlan::add(Fault fault) {
  for (const auto& w : fault.when)
    if (!find_condition(w)) throw std::invalid_argument("unknown fault condition '" + w + "'; expected one of " + fault_condition_list());
  if (!is_known_error_type(fault.type))
    throw std::invalid_argument("unknown fault exception type '" + fault.type + "'; expected one of " + error_type_list());
  faults_.push_back(std::move(fault));
}

int FaultPlan::fired() const noexcept {
  int n = 0;
  for (const auto& f : faults_) n += f.fired;
  return n;
}

void FaultPlan::check(const FaultContext& ctx) {
  for (auto& f : faults_) {
    if (f.times >= 0 && f.fired >= f.times) continue;
    if (f.site != "*" && f.site != ctx.site) continue;
    if (f.device && *f.device != ctx.device.kind) continue;
    bool holds = true;
    for (const auto& w : f.when) holds = holds && find_condition(w)->holds(ctx);
    if (!holds) continue;
    ++f.fired;
    {
      ScopedOp op("fault", ctx.site, ctx.device.str());
      op.outcome("injected");
      op.field("type", f.type);
      op.field("text", f.text);
    }
    throw_error_of_type(f.type, f.text);
  }
}

ScopedFaultPlan::ScopedFaultPlan(FaultPlan& plan) : previous_(t_active_plan) { t_active_plan = &plan; }
ScopedFaultPlan::~ScopedFaultPlan() { t_active_plan = previous_; }

void fault_point(const FaultContext& ctx) {
  if (t_active_plan) t_active_plan->check(ctx);
}

bool is_fault_condition(const std::string& name) { return find_condition(name) != nullptr; }

std::string fault_condition_list() {
  return named::names_described(kConditions, [](const Condition& c) { return c.meaning; });
}

}  // namespace crossdev::manager
