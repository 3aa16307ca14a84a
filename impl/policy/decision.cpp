#include "policy/decision.h"

namespace crossdev {
namespace {

struct ActionRow {
  Action action;
  const char* name;
};
constexpr ActionRow kActions[] = {
    {Action::Honored, "honored"},       {Action::Redirected, "redirected"},
    {Action::Substituted, "substituted"}, {Action::DefaultInjected, "default_injected"},
    {Action::OverrideOn, "override_on"}, {Action::OverrideOff, "override_off"},
};

struct ViaRow {
  Via via;
  const char* name;
};
constexpr ViaRow kVias[] = {{Via::Create, "create"}, {Via::To, "to"}, {Via::Implicit, "implicit"}};

}  // namespace

const char* action_name(Action action) noexcept { return kActions[static_cast<int>(action)].name; }

std::optional<Action> action_from_name(std::string_view name) noexcept {
  for (const auto& row : kActions)
    if (name == row.name) return row.action;
  return std::nullopt;
}

const char* action_list() noexcept {
  return "honored, redirected, substituted, default_injected, override_on, override_off";
}

const char* via_name(Via via) noexcept { return kVias[static_cast<int>(via)].name; }

std::optional<Via> via_from_name(std::string_view name) noexcept {
  for (const auto& row : kVias)
    if (name == row.name) return row.via;
  return std::nullopt;
}

const char* reason_text(Reason reason) noexcept {
  switch (reason) {
    case Reason::DefaultAccelerator: return "no device given: the default accelerator is injected";
    case Reason::NoAcceleratorForDefault: return "no device given and no accelerator of the preset's order is present: CPU";
    case Reason::OverrideEnabled: return "cpu:-1 turned the CPU override on: explicit CPU requests now stay on CPU";
    case Reason::OverrideDisabled: return "cpu:-1 turned the CPU override off: explicit CPU requests are redirected again";
    case Reason::CpuOverrideActive: return "CPU override active: explicit CPU request honoured";
    case Reason::CpuRedirected:
      return "explicit CPU request redirected to the default accelerator (use 'cpu:-1' for a real CPU tensor)";
    case Reason::CpuOnlyHost: return "no accelerator of the preset's order is present: the CPU request stays on CPU";
    case Reason::RequestedPresent: return "requested device is present";
    case Reason::PresentButNotPreferred:
      return "requested accelerator is present but the preset prefers another: redirected to the preferred one";
    case Reason::IndexOutOfRange:
      return "device index beyond this host's device count: index 0 of the same kind is used";
    case Reason::AbsentRedirected: return "requested accelerator absent: redirected to the default accelerator";
    case Reason::AbsentNoAccelerator: return "requested accelerator absent and no accelerator of the preset's order is present: CPU";
    case Reason::RedirectsDisabled:
      return "redirection disabled for this preset (TORCH_ALLOW_REDIRECTS=true enables it): passed through";
    case Reason::RedirectsDisabledAbsent:
      return "redirection disabled: passed through although this host lacks the device; PyTorch raises on first use";
  }
  return "?";
}

std::string Decision::describe() const {
  std::string out = requested_str();
  out.append(" -> ").append(resolved.str()).append(" [").append(action_name(action)).append(", via ");
  out.append(via_name(via)).append("] ").append(reason_text(reason));
  return out;
}

}  // namespace crossdev
