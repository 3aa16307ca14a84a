#pragma once
// The divergence switch: with it on for a simulated kind, sim differs from the CPU wherever a real
// device of that kind may legitimately differ (docs/sim-backend.md, "Diverging from the CPU"): its own
// random stream, other signs of eigen/SVD/QR factors, CUDA's shapes and dtypes for outputs the
// contract leaves open, TF32 operands where PyTorch's TF32 flags allow them, another reduction order.
// Off by default, so sim stays bit-identical with the CPU; `make report` turns it on.
//
// Set by the environment, so every process of a run (isolation and Python workers) sees the same:
//   CROSSDEV_SIM_DIVERGE=   "" or 0: off;  1 or all: every simulated kind;  cuda,mps: those kinds
// This file parses the switch and holds the per-kind traits (one table); diverging_ops.* applies it.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "device/device_kind.h"
#include "sim/emulation_profile.h"

namespace crossdev::sim {

inline constexpr const char* kDivergeEnv = "CROSSDEV_SIM_DIVERGE";

// Where a simulated kind takes its TF32 switches from.
enum class Tf32Flags : std::uint8_t {
  None,        // never TF32 (mps, xpu, xla: no profile says otherwise)
  CudaFlags,   // mm family: at::globalContext().allowTF32CuBLAS(); convolution: allowTF32CuDNN()
};

struct DivergenceTraits {
  ProfileId profile;
  std::uint64_t stream_mix;  // XORed into the seed of the sim generator's engine (low 32 bits nonzero)
  Tf32Flags tf32;
};

const DivergenceTraits& divergence_traits(ProfileId id) noexcept;

// The kinds a switch value turns on. Throws std::invalid_argument naming the value and the grammar.
std::vector<DeviceKind> parse_diverge_spec(std::string_view value);
// parse_diverge_spec($CROSSDEV_SIM_DIVERGE); empty when unset.
std::vector<DeviceKind> diverging_kinds_from_env();
// Whether the environment turns the switch on for the profile (never for plain, which emulates no kind).
bool diverge_from_env(ProfileId id);

// TF32 operand rounding that PyTorch's own flags ask of the simulated kind right now.
bool tf32_for_gemm(ProfileId id);
bool tf32_for_convolution(ProfileId id);

}  // namespace crossdev::sim
