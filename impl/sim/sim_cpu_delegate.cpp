#include "sim/sim_cpu_delegate.h"

#include <mutex>
#include <optional>
#include <vector>

#include <ATen/native/CPUFallback.h>
#include <c10/util/Exception.h>

#include "sim/diverging_ops.h"
#include "sim/numerics.h"
#include "sim/profile_checks.h"
#include "sim/sim_config.h"
#include "sim/sim_generator.h"
#include "sim/unannotated_writes.h"

namespace crossdev::sim {
namespace {

std::mutex& records_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, DelegationRecord>& records() {
  static auto* r = new std::map<std::string, DelegationRecord>();
  return *r;
}

void record(const std::string& op, DelegationReason reason) {
  std::lock_guard<std::mutex> lock(records_mutex());
  DelegationRecord& r = records()[op];
  r.reason = reason;
  ++r.count;
}

bool is_generator_argument(const c10::Argument& arg) {
  c10::TypePtr type = arg.type();
  if (auto optional = type->cast<c10::OptionalType>()) type = optional->getElementType();
  return type->kind() == c10::TypeKind::GeneratorType;
}

// CPU kernels only accept CPU generators: hand them the sim generator's engine (the device's
// default generator when none was given), so seeding the sim generator controls the op.
void substitute_generators(const c10::FunctionSchema& schema, torch::jit::Stack& stack) {
  const auto& args = schema.arguments();
  const std::size_t base = stack.size() - args.size();
  c10::DeviceIndex device = -1;
  for (std::size_t i = 0; i < args.size() && device < 0; ++i)
    if (stack[base + i].isTensor() && stack[base + i].toTensor().is_privateuseone())
      device = stack[base + i].toTensor().device().index();
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!is_generator_argument(args[i])) continue;
    c10::IValue& v = stack[base + i];
    if (v.isNone()) {
      v = default_generator(device).get<SimGeneratorImpl>()->cpu_engine();
    } else if (v.isGenerator() && v.toGenerator().device().is_privateuseone()) {
      at::Generator engine = v.toGenerator().get<SimGeneratorImpl>()->cpu_engine();
      v = engine;
    }
  }
}

std::string full_name(const c10::OperatorName& op) {
  return op.overload_name.empty() ? op.name : op.name + "." + op.overload_name;
}

}  // namespace

const char* delegation_reason_text(DelegationReason reason) noexcept {
  switch (reason) {
    case DelegationReason::NoNativeSimKernel:
      return "no native sim kernel: delegated to the host CPU kernel";
    case DelegationReason::ProfileUnsupported:
      return "unsupported on the emulated device; delegated to the CPU because the MPS CPU switch is on";
  }
  return "unknown";
}

namespace {

// What both delegates do before the CPU runs the op: the profile's checks (inference mode, one device,
// the op supported or sent to the CPU by the MPS CPU switch, with its warning) and the delegation record.
std::shared_ptr<const SimConfig> admit_delegation(const c10::OperatorHandle& op, const torch::jit::Stack& stack) {
  auto config = current_config();
  const EmulationProfile& p = profile(config->profile);
  const c10::FunctionSchema& schema = op.schema();
  check_inference_mode(p);
  check_same_device(p, schema, stack);
  const bool delegated_by_switch = check_op_supported(p, *config, schema.operator_name());
  const std::string name = full_name(schema.operator_name());
  if (delegated_by_switch && p.cpu_switch_warning != nullptr) {
    TORCH_WARN_ONCE(p.cpu_switch_warning(name));
  }
  record(name, delegated_by_switch ? DelegationReason::ProfileUnsupported : DelegationReason::NoNativeSimKernel);
  return config;
}

}  // namespace

void sim_delegate_to_cpu(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto config = admit_delegation(op, *stack);
  const c10::FunctionSchema& schema = op.schema();
  if (config->numerics.tf32_matmul) round_matmul_operands(schema, *stack);
  const DivergentCall divergent(*config, schema, *stack);  // the divergence switch's table (diverging_ops.h)
  substitute_generators(schema, *stack);
  alias_unannotated_writes(schema, *stack);
  at::native::cpu_fallback(op, stack);
  divergent.after(*stack);
  if (config->numerics.flush_subnormals) flush_subnormal_outputs(schema, *stack);
}

void sim_sparse_delegate_to_cpu(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  admit_delegation(op, *stack);
  const c10::FunctionSchema& schema = op.schema();

  const auto& args = schema.arguments();
  const std::size_t base = stack->size() - args.size();
  std::optional<c10::Device> device;
  std::vector<c10::IValue> originals(stack->begin() + static_cast<std::ptrdiff_t>(base), stack->end());
  // The CPU copy keeps requires_grad: some of ATen's sparse CPU kernels read it below autograd, e.g.
  // _sparse_mm_reduce_impl computes arg_out (what amax/amin's backward indexes) only for an input that
  // requires grad, so without the flag the backward read an empty arg_out and segfaulted.
  auto to_cpu = [&](const at::Tensor& t) {
    if (!t.defined() || !t.is_privateuseone()) return t;
    device = t.device();
    at::Tensor moved = t.cpu();
    if (t.requires_grad() && !moved.requires_grad()) moved.set_requires_grad(true);
    return moved;
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    c10::IValue& v = (*stack)[base + i];
    if (v.isTensor()) {
      v = to_cpu(v.toTensor());
    } else if (v.isTensorList()) {
      std::vector<at::Tensor> moved;
      for (const at::Tensor& t : v.toTensorVector()) moved.push_back(to_cpu(t));
      v = c10::List<at::Tensor>(moved);
    }
  }
  substitute_generators(schema, *stack);
  std::vector<c10::IValue> cpu_args(stack->begin() + static_cast<std::ptrdiff_t>(base), stack->end());
  op.callBoxed(stack);
  // What the op wrote (in-place and out= arguments) goes back into the sim tensors it came from.
  for (std::size_t i = 0; i < args.size(); ++i) {
    const c10::AliasInfo* alias = args[i].alias_info();
    if (alias && alias->isWrite() && originals[i].isTensor() && originals[i].toTensor().is_privateuseone())
      originals[i].toTensor().copy_(cpu_args[i].toTensor());
  }
  const auto& returns = schema.returns();
  const std::size_t results = stack->size() - base;
  for (std::size_t r = 0; r < results; ++r) {
    c10::IValue& v = (*stack)[base + r];
    const c10::AliasInfo* alias = r < returns.size() ? returns[r].alias_info() : nullptr;
    if (alias && alias->isWrite()) {  // returns the argument it wrote: the sim tensor itself
      for (std::size_t i = 0; i < args.size(); ++i)
        if (args[i].alias_info() && args[i].alias_info()->beforeSets() == alias->beforeSets()) v = originals[i];
      continue;
    }
    if (!device) continue;
    if (v.isTensor() && v.toTensor().defined()) {
      v = v.toTensor().to(*device);
    } else if (v.isTensorList()) {
      std::vector<at::Tensor> moved;
      for (const at::Tensor& t : v.toTensorVector()) moved.push_back(t.defined() ? t.to(*device) : t);
      v = c10::List<at::Tensor>(moved);
    }
  }
}

std::map<std::string, DelegationRecord> delegation_records() {
  std::lock_guard<std::mutex> lock(records_mutex());
  return records();
}

void reset_delegation_records() {
  std::lock_guard<std::mutex> lock(records_mutex());
  records().clear();
}

}  // namespace crossdev::sim
