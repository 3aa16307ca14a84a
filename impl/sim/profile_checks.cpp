#include "sim/profile_checks.h"

#include <array>
#include <optional>
#include <sstream>
#include <string_view>

#include <ATen/core/function_schema.h>
#include <c10/core/InferenceMode.h>
#include <c10/util/Exception.h>

namespace crossdev::sim {
namespace {

// CUDA kernels of these ops accept CPU index tensors next to device tensors (e.g. t[cpu_idx]).
constexpr std::array<std::string_view, 4> kMixedDeviceTolerantOps = {
    "aten::index", "aten::index_put", "aten::index_put_", "aten::_index_put_impl_"};

// "Expected all tensors to be on the same device, but found at least two devices, a and b!"
// (ATen/TensorIterator.cpp, compute_types), checked against torch 2.13 on cuda/cpu mixing.
std::string same_device_message(const c10::Device& first, const c10::Device& second) {
  std::ostringstream out;
  out << "Expected all tensors to be on the same device, but found at least two devices, " << first << " and "
      << second << "!";
  return out.str();
}

// MPS kernels read a CPU tensor's (absent) MTLBuffer: aten/src/ATen/native/mps/OperationUtils.mm.
constexpr const char* kMpsPlaceholder = "Placeholder storage has not been allocated on MPS device!";

template <typename F>
void for_each_tensor(const c10::IValue& value, F&& f) {
  if (value.isTensor()) {
    f(value.toTensor());
  } else if (value.isTensorList()) {
    for (const at::Tensor& t : value.toTensorList()) f(t);
  } else if (value.isList()) {
    for (const c10::IValue& item : value.toListRef())
      if (item.isTensor()) f(item.toTensor());
  }
}

}  // namespace

void check_dtype_supported(const EmulationProfile& p, c10::ScalarType dtype) {
  if (const std::string* message = rejected_dtype_message(p, dtype)) TORCH_CHECK_TYPE(false, *message);
}

void check_inference_mode(const EmulationProfile& p) {
  if (p.inference_mode_error != nullptr && c10::InferenceMode::is_enabled())
    TORCH_CHECK(false, p.inference_mode_error);
}

void check_same_device(const EmulationProfile& p, const c10::FunctionSchema& schema, const torch::jit::Stack& stack) {
  for (std::string_view tolerant : kMixedDeviceTolerantOps)
    if (schema.name() == tolerant) return;
  const std::size_t num_args = schema.arguments().size();
  std::optional<c10::Device> first;
  std::optional<c10::Device> second;
  for (std::size_t i = stack.size() - num_args; i < stack.size() && !second; ++i) {
    for_each_tensor(stack[i], [&](const at::Tensor& t) {
      if (second || !t.defined()) return;
      if (t.device().is_cpu() && t.dim() == 0) return;  // CPU scalar: allowed everywhere
      if (!first) first = t.device();
      else if (t.device() != *first) second = t.device();
    });
  }
  if (!second) return;
  if (p.mixed_device_text == MixedDeviceText::MpsPlaceholder && (first->is_cpu() || second->is_cpu()))
    TORCH_CHECK(false, kMpsPlaceholder);
  TORCH_CHECK(false, same_device_message(*first, *second));
}

bool check_op_supported(const EmulationProfile& p, const SimConfig& config, const c10::OperatorName& op) {
  if (!op_listed(config.unsupported_ops, op.name, op.overload_name)) return false;
  std::string full = op.name;
  if (!op.overload_name.empty()) full += "." + op.overload_name;
  TORCH_CHECK_NOT_IMPLEMENTED(config.unsupported_ops_on_cpu, p.unsupported_op_message(full));
  return true;
}

}  // namespace crossdev::sim
