#pragma once
// What a device can do, as one struct per device: the dtypes it stores, whether torch.compile
// and distributed training are supported (seed 004), the inference context (seed 001) and
// the preferred low-precision dtype (bf16 on XLA). Backends supply the per-kind facts
// (BackendTraits); the per-device answer is assembled by DeviceManager::capabilities().
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <c10/core/ScalarType.h>

#include "device/device_spec.h"
#include "policy/context_policy.h"
#include "util/dtype_names.h"

namespace crossdev::manager {

// A dtype a kind cannot hold, the dtype it is cast to instead, and why (quoted in cast logs).
struct DtypeSubstitute {
  c10::ScalarType unsupported;
  c10::ScalarType replacement;
  const char* reason;
};

// Per-kind facts a backend declares; the table of them is the backends themselves.
struct BackendTraits {
  std::vector<DtypeSubstitute> unsupported_dtypes;
  c10::ScalarType low_precision = c10::ScalarType::BFloat16;
  const char* low_precision_reason = "";
  const char* source = "";  // seed / upstream reference for these facts
};

struct Capabilities {
  DeviceSpec device;
  bool simulated = false;
  std::vector<c10::ScalarType> unsupported_dtypes;
  bool compile_supported = true;
  const char* compile_reason = "";
  bool distributed_supported = true;
  const char* distributed_reason = "";
  InferenceContext inference_context = InferenceContext::InferenceMode;
  c10::ScalarType low_precision = c10::ScalarType::BFloat16;
  std::string low_precision_reason;

  bool supports(c10::ScalarType dtype) const;
};

// Dtype names (torch's Python spellings) come from the one table, util/dtype_names.h.

}  // namespace crossdev::manager
