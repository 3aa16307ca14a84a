#include "sim/emulation_profile.h"

#include "util/named_table.h"

#include <c10/util/Exception.h>

namespace crossdev::sim {
namespace {

// aten/src/ATen/native/mps/MPSFallback.mm, mps_error_fallback().
std::string mps_unsupported_op(const std::string& op) {
  return "The operator '" + op +
         "' is not currently implemented for the MPS device. If you want this op to be added in priority during "
         "the prototype phase of this feature, please comment on https://github.com/pytorch/pytorch/issues/77764. "
         "As a temporary fix, you can set the environment variable `PYTORCH_ENABLE_MPS_FALLBACK=1` to use the CPU "
         "as a fallback for this op. WARNING: this will be slower than running natively on MPS.";
}
// aten/src/ATen/native/mps/MPSFallback.mm, mps_fallback().
std::string mps_cpu_switch_warning(const std::string& op) {
  return "The operator '" + op +
         "' is not currently supported on the MPS backend and will fall back to run on the CPU. This may have "
         "performance implications.";
}
// Devices with no CPU switch: the op is simply missing.
std::string generic_unsupported_op(const std::string& op) {
  return "The operator '" + op + "' is not implemented for the simulated device (crossdev sim).";
}

// cudaGetErrorString(cudaErrorInvalidDevice), as torch reports it ("CUDA error: ...").
std::string cuda_invalid_index(int, int) { return "CUDA error: invalid device ordinal"; }
// c10/xpu/XPUFunctions.h, check_device_index().
std::string xpu_invalid_index(int index, int count) {
  return "The device index is out of range. It must be in [0, " + std::to_string(count) + "), but got " +
         std::to_string(index) + ".";
}
// No verbatim source: MPS and XLA hosts are single-process/single-device in practice.
std::string generic_invalid_index(int index, int count) {
  return "sim: device index " + std::to_string(index) + " is out of range for this profile; it has " +
         std::to_string(count) + (count == 1 ? " device" : " devices") + " (valid: 0.." + std::to_string(count - 1) +
         ")";
}

// aten/src/ATen/mps/EmptyTensor.cpp (MPS_ERROR_DOUBLE_NOT_SUPPORTED).
constexpr const char* kMpsFloat64 =
    "Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64. Please use float32 "
    "instead.";
// aten/src/ATen/native/mps/OperationUtils.mm, getMPSDataType().
std::string mps_unconvertible(c10::ScalarType t) {
  return std::string("Trying to convert ") + c10::toString(t) +
         " to the MPS backend but it does not have support for that dtype.";
}

// c10/core/TensorImpl.h, set_version_counter(): what XLA tensors hit under torch.inference_mode (seed 001).
constexpr const char* kXlaInferenceMode = "Cannot set version_counter for inference tensor";

const std::array<EmulationProfile, kNumProfiles>& table() {
  static const std::array<EmulationProfile, kNumProfiles> kTable = {{
      {ProfileId::Plain, "plain", std::nullopt, 1, 16, {}, {}, nullptr, &generic_unsupported_op, nullptr,
       MixedDeviceText::SameDevice, nullptr, c10::ScalarType::Float, &generic_invalid_index, "sim out of memory.",
       "no emulation: a host-memory PrivateUse1 device"},
      {ProfileId::MpsLike, "mps-like", DeviceKind::MPS, 1, 1,
       {{c10::ScalarType::Double, kMpsFloat64},
        {c10::ScalarType::ComplexDouble, mps_unconvertible(c10::ScalarType::ComplexDouble)}},
       // Ops users have reported as missing on MPS (error texts quoted in public issues); the
       // list is configurable per run (SimConfig::unsupported_ops).
       {"aten::_linalg_solve_ex", "aten::upsample_bicubic2d", "aten::max_pool3d_with_indices",
        "aten::grid_sampler_2d_backward"},
       "PYTORCH_ENABLE_MPS_FALLBACK", &mps_unsupported_op, &mps_cpu_switch_warning, MixedDeviceText::MpsPlaceholder,
       nullptr, c10::ScalarType::Float, &generic_invalid_index, "MPS backend out of memory",
       "aten/src/ATen/mps/EmptyTensor.cpp, aten/src/ATen/native/mps/MPSFallback.mm, "
       "aten/src/ATen/native/mps/OperationUtils.mm"},
      {ProfileId::TpuLike, "tpu-like", DeviceKind::XLA, 1, 8, {}, {}, nullptr, &generic_unsupported_op, nullptr,
       MixedDeviceText::SameDevice, kXlaInferenceMode, c10::ScalarType::BFloat16, &generic_invalid_index,
       "RESOURCE_EXHAUSTED: Out of memory.", "c10/core/TensorImpl.h (set_version_counter); seed 001"},
      {ProfileId::CudaLike, "cuda-like", DeviceKind::CUDA, 2, 16, {}, {}, nullptr, &generic_unsupported_op,
       nullptr, MixedDeviceText::SameDevice, nullptr, c10::ScalarType::Float, &cuda_invalid_index,
       "CUDA out of memory.", "cudaGetErrorString(cudaErrorInvalidDevice); c10/cuda/CUDACachingAllocator.cpp"},
      {ProfileId::XpuLike, "xpu-like", DeviceKind::XPU, 1, 16, {}, {}, nullptr, &generic_unsupported_op, nullptr,
       MixedDeviceText::SameDevice, nullptr, c10::ScalarType::Float, &xpu_invalid_index, "XPU out of memory.",
       "c10/xpu/XPUFunctions.h (check_device_index)"},
  }};
  return kTable;
}

}  // namespace

const EmulationProfile& profile(ProfileId id) noexcept { return table()[static_cast<int>(id)]; }
const char* profile_name(ProfileId id) noexcept { return profile(id).name; }

std::optional<ProfileId> profile_from_name(std::string_view name) noexcept {
  if (const auto* p = named::find(table(), name)) return p->id;
  return std::nullopt;
}

std::optional<ProfileId> profile_for_kind(DeviceKind kind) noexcept {
  for (const auto& p : table())
    if (p.emulates == kind) return p.id;
  return std::nullopt;
}

const std::string& profile_name_list() {
  static const std::string list = named::names(table());
  return list;
}

const std::string& emulated_kind_list() {
  static const std::string list = [] {
    std::string out;
    for (const auto& p : table())
      if (p.emulates) out += (out.empty() ? "" : ", ") + std::string(kind_name(*p.emulates));
    return out;
  }();
  return list;
}

const std::string* rejected_dtype_message(const EmulationProfile& p, c10::ScalarType dtype) noexcept {
  for (const auto& r : p.rejected_dtypes)
    if (r.dtype == dtype) return &r.message;
  return nullptr;
}

}  // namespace crossdev::sim
