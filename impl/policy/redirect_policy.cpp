#include "policy/redirect_policy.h"

#include <cctype>
#include <cstdlib>

#include "log/logger.h"

namespace crossdev {
namespace {

Decision make(const DeviceSpec* request, DeviceSpec resolved, Action action, Reason reason, Via via) noexcept {
  Decision d;
  d.has_request = request != nullptr;
  if (request) d.requested = *request;
  d.resolved = resolved;
  d.action = action;
  d.reason = reason;
  d.via = via;
  return d;
}

void log_decision(const Decision& d) {
  if (d.action == Action::Honored) return;
  const LogLevel level = d.reason == Reason::IndexOutOfRange ? LogLevel::Warning : LogLevel::Info;
  auto& logger = Logger::global();
  if (!logger.enabled(level)) return;
  logger.log(level, "redirect", d.describe(),
             {{"requested", d.requested_str()}, {"used", d.resolved.str()}, {"action", action_name(d.action)},
              {"via", via_name(d.via)}});
}

}  // namespace

bool allow_redirects_value(std::string_view env_value) noexcept {
  constexpr std::string_view kTrue = "true";
  if (env_value.size() != kTrue.size()) return false;
  for (std::size_t i = 0; i < kTrue.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(env_value[i])) != kTrue[i]) return false;
  return true;
}

PolicyState PolicyState::for_preset(const Preset& preset, std::string_view allow_redirects_env) {
  PolicyState state;
  state.redirects_enabled = allow_redirects_value(allow_redirects_env) || preset.redirects_by_default;
  return state;
}

PolicyState PolicyState::from_env(const Preset& preset) {
  const char* env = std::getenv("TORCH_ALLOW_REDIRECTS");
  return for_preset(preset, env ? std::string_view(env) : std::string_view());
}

PolicyState& process_policy_state() {
  static PolicyState state = PolicyState::from_env(default_preset());
  return state;
}

DeviceSpec RedirectPolicy::default_device(const HostProfile& host) const noexcept {
  for (std::uint8_t i = 0; i < preset_->order_len; ++i) {
    const DeviceKind kind = preset_->order[i];
    if (kind != DeviceKind::CPU && host.has(kind)) return DeviceSpec::of(kind, 0);
  }
  return DeviceSpec::of(DeviceKind::CPU);
}

Decision RedirectPolicy::resolve(const DeviceSpec* request, const HostProfile& host, PolicyState& state,
                                 Via via) const noexcept {
  Decision d = decide(request, host, state, via);
  log_decision(d);
  return d;
}

Decision RedirectPolicy::decide(const DeviceSpec* request, const HostProfile& host, PolicyState& state,
                                Via via) const noexcept {
  const DeviceSpec cpu = DeviceSpec::of(DeviceKind::CPU);
  const DeviceSpec preferred = default_device(host);
  const bool have_accelerator = preferred.kind != DeviceKind::CPU;

  // Table row "None / Not Provided": injection happens whether or not redirects are enabled,
  // and the CPU override does not apply (it covers explicit CPU requests only).
  if (!request) {
    return have_accelerator ? make(request, preferred, Action::DefaultInjected, Reason::DefaultAccelerator, via)
                            : make(request, cpu, Action::Substituted, Reason::NoAcceleratorForDefault, via);
  }

  // Table row "cpu:-1": toggles the override; the tensor itself is created on CPU either way.
  if (request->cpu_override) {
    state.cpu_override = !state.cpu_override;
    return state.cpu_override ? make(request, cpu, Action::OverrideOn, Reason::OverrideEnabled, via)
                              : make(request, cpu, Action::OverrideOff, Reason::OverrideDisabled, via);
  }

  if (request->kind == DeviceKind::CPU) {
    if (!state.redirects_enabled) return make(request, cpu, Action::Honored, Reason::RedirectsDisabled, via);
    if (state.cpu_override) return make(request, cpu, Action::Honored, Reason::CpuOverrideActive, via);
    if (have_accelerator) return make(request, preferred, Action::Redirected, Reason::CpuRedirected, via);
    return make(request, cpu, Action::Honored, Reason::CpuOnlyHost, via);
  }

  // An accelerator was requested.
  const int count = host.count(request->kind);
  if (!state.redirects_enabled) {
    const bool usable = count > 0 && request->effective_index() < count;
    return make(request, *request, Action::Honored, usable ? Reason::RedirectsDisabled : Reason::RedirectsDisabledAbsent,
                via);
  }
  if (count > 0) {
    if (preset_->redirect_present_to_preferred && have_accelerator && preferred.kind != request->kind) {
      return make(request, preferred, Action::Redirected, Reason::PresentButNotPreferred, via);
    }
    if (request->effective_index() >= count) {
      return make(request, DeviceSpec::of(request->kind, 0), Action::Substituted, Reason::IndexOutOfRange, via);
    }
    return make(request, DeviceSpec::of(request->kind, request->effective_index()), Action::Honored,
                Reason::RequestedPresent, via);
  }
  if (have_accelerator) return make(request, preferred, Action::Redirected, Reason::AbsentRedirected, via);
  return make(request, cpu, Action::Substituted, Reason::AbsentNoAccelerator, via);
}

}  // namespace crossdev
