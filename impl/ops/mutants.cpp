#include "ops/mutants.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <stdexcept>

#include "ops/op_registry.h"

namespace crossdev::ops {
namespace {

std::atomic<std::uint8_t> g_active{static_cast<std::uint8_t>(Mutant::None)};
std::once_flag g_env_once;

const MutantInfo* find_mutant(const std::string& name) {
  for (const MutantInfo& info : mutant_table()) {
    if (name == info.name) return &info;
  }
  return nullptr;
}

std::string valid_names() {
  std::string out;
  for (const MutantInfo& info : mutant_table()) {
    out += out.empty() ? "" : ", ";
    out += info.name;
  }
  return out;
}

void activate(const std::string& name, const char* origin) {
  if (name.empty()) {
    g_active.store(static_cast<std::uint8_t>(Mutant::None), std::memory_order_relaxed);
    return;
  }
  const MutantInfo* info = find_mutant(name);
  if (info == nullptr) {
    throw std::invalid_argument(std::string(origin) + ": unknown mutant '" + name +
                                "'; expected one of: " + valid_names());
  }
  g_active.store(static_cast<std::uint8_t>(info->id), std::memory_order_relaxed);
}

void read_env_once() {
  std::call_once(g_env_once, [] {
    const char* env = std::getenv("CROSSDEV_MUTANT");
    if (env != nullptr) activate(env, "CROSSDEV_MUTANT");
  });
}

}  // namespace

const std::vector<MutantInfo>& mutant_table() {
  static const std::vector<MutantInfo> table = {
      {Mutant::ModulateWrongBroadcastAxis, "modulate.wrong_broadcast_axis",
       "shift/scale rows indexed by time step t % B instead of batch b (B >= 2 exposes it)"},
      {Mutant::BiasDropoutScaleOnResidual, "bias_dropout_add_scale.scale_on_residual",
       "computes scale * (dropout(x + bias) + residual) (a residual with scale != 1 exposes it)"},
      {Mutant::BiasDropoutMaskNotRescaled, "bias_dropout_add_scale.mask_not_rescaled",
       "kept elements are not multiplied by 1 / (1 - p) (training with p > 0 exposes it)"},
      {Mutant::RmsNormEpsX10, "rms_norm.eps_x10",
       "uses 10 * eps (rows whose mean square is near eps expose it)"},
      {Mutant::RmsNormFp16Accum, "rms_norm.fp16_accum",
       "accumulates the sum of squares in the storage dtype (float16/bfloat16 with long rows)"},
      {Mutant::LayerNormModulateUnbiasedVariance, "layer_norm_modulate.unbiased_variance",
       "divides the sum of squared deviations by D - 1 (short rows expose it)"},
      {Mutant::GeluTanhDropVecTail, "gelu_tanh.drop_vec_tail",
       "skips the scalar tail after the last full vector (sizes not a multiple of the width)"},
      {Mutant::SwigluSiluOnUp, "swiglu.silu_on_up", "computes gate * silu(up)"},
      {Mutant::RotaryIgnoreStride, "rotary.ignore_stride",
       "reads x as if it were contiguous (non-contiguous x exposes it)"},
      {Mutant::SoftmaxMaskWrongBatch, "scaled_masked_softmax.mask_wrong_batch",
       "applies batch 0's mask to every batch (per-batch masks with B >= 2 expose it)"},
  };
  return table;
}

bool mutant_active(Mutant mutant) {
  read_env_once();
  return g_active.load(std::memory_order_relaxed) == static_cast<std::uint8_t>(mutant);
}

std::vector<std::string> mutant_names() {
  std::vector<std::string> names;
  for (const MutantInfo& info : mutant_table()) names.emplace_back(info.name);
  return names;
}

void set_active_mutant(const std::string& name) {
  read_env_once();
  activate(name, "set_active_mutant");
}

std::string active_mutant() {
  read_env_once();
  const auto id = static_cast<Mutant>(g_active.load(std::memory_order_relaxed));
  for (const MutantInfo& info : mutant_table()) {
    if (info.id == id) return info.name;
  }
  return "";
}

}  // namespace crossdev::ops
