#include "manager/device_manager.h"

#include <stdexcept>

#include "manager/op_log.h"
#include "manager/masquerade.h"

namespace crossdev::manager {

DeviceSpec canonical_device(const DeviceSpec& device) noexcept {
  if (kind_info(device.kind).single_device) return DeviceSpec::of(device.kind);
  return DeviceSpec::of(device.kind, device.effective_index());
}

DeviceManager::DeviceManager(HostProfile host, ManagerConfig config)
    : host_(std::move(host)), config_(std::move(config)) {
  if (!config_.policy) config_.policy = &default_preset();
  if (!config_.detect) config_.detect = &default_preset();
  // An explicit manager follows its preset's platform default; TORCH_ALLOW_REDIRECTS is read
  // by PolicyState::from_env for process-wide use, not here, so results do not depend on the shell.
  state_ = PolicyState::for_preset(*config_.policy, "");
}

void DeviceManager::require_present(const DeviceSpec& device) const {
  if (device.kind == DeviceKind::CPU) return;
  const int count = host_.count(device.kind);
  if (count == 0)
    throw std::invalid_argument(std::string("device ") + device.str() + " is not present on this host (" + host_.summary() + ")");
  if (device.effective_index() >= count)
    throw std::invalid_argument("device " + device.str() + " is out of range: this host has " + std::to_string(count) + " " +
                                kind_name(device.kind) + " device(s)");
}

bool DeviceManager::is_simulated(const DeviceSpec& device) const {
  return device.kind != DeviceKind::CPU && host_.provenance(device.kind) == Provenance::Simulated;
}

c10::Device DeviceManager::storage_device(const DeviceSpec& device) const {
  require_present(device);
  if (is_simulated(device) && config_.simulated_storage)
    if (const auto d = config_.simulated_storage(canonical_device(device))) return *d;
  if (is_simulated(device) || device.kind == DeviceKind::CPU) return c10::Device(c10::DeviceType::CPU);
  return c10::Device(kind_info(device.kind).c10_type, static_cast<c10::DeviceIndex>(device.effective_index()));
}

Capabilities DeviceManager::capabilities(const DeviceSpec& device) const {
  require_present(device);
  const DeviceBackend& backend = backend_for(device.kind);
  Capabilities c;
  c.device = canonical_device(device);
  c.simulated = is_simulated(device);
  for (const auto& sub : backend.traits().unsupported_dtypes) c.unsupported_dtypes.push_back(sub.unsupported);
  const Eligibility compile = compile_eligibility(device.kind);
  c.compile_supported = compile.eligible;
  c.compile_reason = compile.reason;
  const Eligibility distributed = distributed_eligibility(device.kind);
  c.distributed_supported = distributed.eligible;
  c.distributed_reason = distributed.reason;
  c.inference_context = inference_context_for(device.kind);
  c.low_precision = backend.low_precision_for(properties(device));
  c.low_precision_reason = backend.traits().low_precision_reason;
  return c;
}

MemoryStats DeviceManager::memory_stats(const DeviceSpec& device) const {
  require_present(device);
  if (is_simulated(device)) return simulated_memory_stats(host_, device);
  return backend_for(device.kind).memory_stats(device.effective_index());
}

EmptyCacheResult DeviceManager::empty_cache(const DeviceSpec& device) {
  require_present(device);
  ScopedOp op("empty_cache", "empty_cache", device.str());
  EmptyCacheResult r = is_simulated(device) ? simulated_empty_cache(device)
                                            : backend_for(device.kind).empty_cache(device.effective_index());
  op.outcome(r.supported ? "ok" : "noop");
  op.field("reason", r.detail);
  op.field("released", std::to_string(r.released));
  return r;
}

UnifiedProperties DeviceManager::properties(const DeviceSpec& device) const {
  require_present(device);
  if (is_simulated(device)) return simulated_device_properties(host_, device);
  return backend_for(device.kind).properties(device.effective_index());
}

DeviceManager::Detection DeviceManager::auto_detect() const {
  const Preset& preset = *config_.detect;
  Detection d{DeviceSpec::of(DeviceKind::CPU), ""};
  std::string order;
  for (std::uint8_t i = 0; i < preset.order_len; ++i) order += std::string(i ? " > " : "") + kind_name(preset.order[i]);
  order += " > cpu";
  for (std::uint8_t i = 0; i < preset.order_len; ++i) {
    const DeviceKind kind = preset.order[i];
    if (kind != DeviceKind::CPU && host_.has(kind)) {
      d.device = canonical_device(DeviceSpec::of(kind, 0));
      d.reason = std::string("first of ") + order + " (preset " + preset.name + ") present: " + kind_name(kind) + " (" +
                 provenance_name(host_.provenance(kind)) + ")";
      break;
    }
  }
  if (d.reason.empty()) d.reason = "no accelerator of " + order + " (preset " + preset.name + ") present: cpu";
  ScopedOp op("detect", "auto_detect", d.device.str());
  op.field("reason", d.reason);
  return d;
}

Decision DeviceManager::resolve(const DeviceSpec* request, Via via) {
  return RedirectPolicy(*config_.policy).resolve(request, host_, state_, via);
}

}  // namespace crossdev::manager
