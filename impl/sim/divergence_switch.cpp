#include "sim/divergence_switch.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <stdexcept>

#include <ATen/Context.h>
#include <torch/version.h>

namespace crossdev::sim {
namespace {

// One row per profile, in ProfileId order. The mixes are splitmix64's constants: any value with
// nonzero low 32 bits gives the CPU engine (mt19937, seeded from the low 32 bits) another stream.
constexpr std::array<DivergenceTraits, kNumProfiles> kTraits = {{
    {ProfileId::Plain, 0x9E3779B97F4A7C15ull, Tf32Flags::None},
    {ProfileId::MpsLike, 0xBF58476D1CE4E5B9ull, Tf32Flags::None},
    {ProfileId::TpuLike, 0x94D049BB133111EBull, Tf32Flags::None},
    {ProfileId::CudaLike, 0xD6E8FEB86659FD93ull, Tf32Flags::CudaFlags},
    {ProfileId::XpuLike, 0xA0761D6478BD642Full, Tf32Flags::None},
}};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::vector<DeviceKind> emulated_kinds() {
  std::vector<DeviceKind> out;
  for (ProfileId id : kAllProfiles)
    if (const auto kind = profile(id).emulates) out.push_back(*kind);
  return out;
}

}  // namespace

const DivergenceTraits& divergence_traits(ProfileId id) noexcept { return kTraits[static_cast<int>(id)]; }

std::vector<DeviceKind> parse_diverge_spec(std::string_view value) {
  const std::string_view spec = trim(value);
  if (spec.empty() || spec == "0") return {};
  if (spec == "1" || spec == "all") return emulated_kinds();
  std::vector<DeviceKind> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = spec.find(',', start);
    const std::string_view item = trim(spec.substr(start, comma == std::string_view::npos ? spec.npos : comma - start));
    const auto kind = kind_from_name(item);
    if (!kind || !profile_for_kind(*kind))
      throw std::invalid_argument(std::string(kDivergeEnv) + "='" + std::string(value) + "': '" + std::string(item) +
                                  "' is not a simulated device kind; expected 0, 1, all, or a comma-separated list of " +
                                  emulated_kind_list());
    if (std::find(out.begin(), out.end(), *kind) == out.end()) out.push_back(*kind);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<DeviceKind> diverging_kinds_from_env() {
  const char* value = std::getenv(kDivergeEnv);
  return value == nullptr ? std::vector<DeviceKind>{} : parse_diverge_spec(value);
}

bool diverge_from_env(ProfileId id) {
  const auto kind = profile(id).emulates;
  if (!kind) return false;
  const auto kinds = diverging_kinds_from_env();
  return std::find(kinds.begin(), kinds.end(), *kind) != kinds.end();
}

// allowTF32CuBLAS and allowTF32CuDNN exist in every torch 2.x and read the flags torch.backends sets, on
// builds without CUDA too. Since the fp32_precision API (torch 2.9) allowTF32CuDNN takes the operator, and
// without one it insists that the convolution and RNN flags agree: convolution asks for its own, as
// cuDNN's convolution in ATen does (by name in 2.9, as at::Float32Op from 2.10).
bool tf32_for_gemm(ProfileId id) {
  return divergence_traits(id).tf32 == Tf32Flags::CudaFlags && at::globalContext().allowTF32CuBLAS();
}
bool tf32_for_convolution(ProfileId id) {
  if (divergence_traits(id).tf32 != Tf32Flags::CudaFlags) return false;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 10)
  return at::globalContext().allowTF32CuDNN(at::Float32Op::CONV);
#elif TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR == 9
  return at::globalContext().allowTF32CuDNN("conv");  // 2.9: the operator by name, before the Float32Op enum
#else
  return at::globalContext().allowTF32CuDNN();
#endif
}

}  // namespace crossdev::sim
