#pragma once
// Deliberately broken fused kernels, one or more per op. A parity check that stays green with
// a mutant active cannot catch that class of bug. The table below is the only list; the
// kernels test their flag once per call (one relaxed atomic load), never per element.
#include <cstdint>
#include <string>
#include <vector>

namespace crossdev::ops {

enum class Mutant : std::uint8_t {
  None,
  ModulateWrongBroadcastAxis,
  BiasDropoutScaleOnResidual,
  BiasDropoutMaskNotRescaled,
  RmsNormEpsX10,
  RmsNormFp16Accum,
  LayerNormModulateUnbiasedVariance,
  GeluTanhDropVecTail,
  SwigluSiluOnUp,
  RotaryIgnoreStride,
  SoftmaxMaskWrongBatch,
};

struct MutantInfo {
  Mutant id;
  const char* name;         // "<op>.<defect>"
  const char* description;  // what the broken kernel does, and which inputs expose it
};
const std::vector<MutantInfo>& mutant_table();

// True when `mutant` is the active one. The first call reads CROSSDEV_MUTANT (an unknown name
// throws std::invalid_argument listing the valid ones).
bool mutant_active(Mutant mutant);

}  // namespace crossdev::ops
