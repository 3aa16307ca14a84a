#pragma once
// The emulation profiles of the `sim` device, as one table. A profile makes the sim device
// behave like a real accelerator's known constraints, with the verbatim error texts that
// accelerator raises. Adding a profile: one enumerator plus one row in emulation_profile.cpp.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <c10/core/ScalarType.h>

#include "device/device_kind.h"

namespace crossdev::sim {

enum class ProfileId : std::uint8_t { Plain = 0, MpsLike, TpuLike, CudaLike, XpuLike };
inline constexpr int kNumProfiles = 5;
inline constexpr std::array<ProfileId, kNumProfiles> kAllProfiles = {
    ProfileId::Plain, ProfileId::MpsLike, ProfileId::TpuLike, ProfileId::CudaLike, ProfileId::XpuLike};

// A dtype the emulated device cannot hold. Raised as c10::TypeError (Python TypeError), as MPS does.
struct RejectedDtype {
  c10::ScalarType dtype;
  std::string message;  // verbatim text of the real device
};

// How device mixing (a sim tensor next to a non-scalar CPU tensor) is reported.
enum class MixedDeviceText : std::uint8_t {
  SameDevice,      // TensorIterator: "Expected all tensors to be on the same device, but found at least two devices, a and b!"
  MpsPlaceholder,  // MPS kernels handed a CPU tensor: "Placeholder storage has not been allocated on MPS device!"
};

// Opt-in numerics emulation (see numerics.h for exactly what each switch does).
struct NumericsOptions {
  bool tf32_matmul = false;     // round fp32 matmul/conv operands to TF32 (10 mantissa bits)
  bool flush_subnormals = false;  // flush subnormal floating outputs of computing ops to zero
  bool operator==(const NumericsOptions& o) const { return tf32_matmul == o.tf32_matmul && flush_subnormals == o.flush_subnormals; }
};

struct EmulationProfile {
  ProfileId id;
  const char* name;                     // "mps-like"
  std::optional<DeviceKind> emulates;   // nullopt for the plain sim device
  int default_device_count;
  int max_device_count;                 // 1 for single-device kinds (mps)
  std::vector<RejectedDtype> rejected_dtypes;
  // Ops that raise NotImplementedError unless the MPS CPU switch is on
  // (PyTorch's PYTORCH_ENABLE_MPS_FALLBACK=1). Names as "aten::op" (any overload) or "aten::op.overload".
  std::vector<std::string> default_unsupported_ops;
  const char* cpu_switch_env;             // the real switch's name; nullptr where the device has none
  std::string (*unsupported_op_message)(const std::string& op_with_overload);
  std::string (*cpu_switch_warning)(const std::string& op_with_overload);  // nullptr: no warning
  MixedDeviceText mixed_device_text;
  const char* inference_mode_error;     // non-null: ops under c10::InferenceMode raise this text
  c10::ScalarType preferred_dtype;      // what the device is fastest with (bf16 on TPU)
  std::string (*invalid_index_message)(int index, int count);
  const char* oom_prefix;               // first words of the device's out-of-memory error
  const char* source;                   // where the verbatim texts come from
};

const EmulationProfile& profile(ProfileId id) noexcept;
const char* profile_name(ProfileId id) noexcept;
std::optional<ProfileId> profile_from_name(std::string_view name) noexcept;
// The profile that emulates a device kind (cuda -> cuda-like, xla -> tpu-like); nullopt for cpu.
std::optional<ProfileId> profile_for_kind(DeviceKind kind) noexcept;
const std::string& profile_name_list();   // "plain, mps-like, tpu-like, cuda-like, xpu-like"
const std::string& emulated_kind_list();  // "mps, xla, cuda, xpu": the kinds some profile emulates

// The message for a dtype the profile rejects, or nullptr when the dtype is fine.
const std::string* rejected_dtype_message(const EmulationProfile& p, c10::ScalarType dtype) noexcept;

}  // namespace crossdev::sim
