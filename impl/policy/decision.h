#pragma once
// What resolve() returns: requested device, resolved device, action, and a one-line reason.
// Plain data with static reason texts, so a decision never allocates.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "device/device_spec.h"

namespace crossdev {

enum class Action : std::uint8_t { Honored, Redirected, Substituted, DefaultInjected, OverrideOn, OverrideOff };
const char* action_name(Action action) noexcept;  // "honored", "redirected", ...
std::optional<Action> action_from_name(std::string_view name) noexcept;
const char* action_list() noexcept;

// How the request reached the policy. Seed 002: `.to()` and implicit creation follow the same
// rules as explicit creation, so `via` is recorded but never changes the outcome.
enum class Via : std::uint8_t { Create, To, Implicit };
const char* via_name(Via via) noexcept;
std::optional<Via> via_from_name(std::string_view name) noexcept;

enum class Reason : std::uint8_t {
  DefaultAccelerator,
  NoAcceleratorForDefault,
  OverrideEnabled,
  OverrideDisabled,
  CpuOverrideActive,
  CpuRedirected,
  CpuOnlyHost,
  RequestedPresent,
  PresentButNotPreferred,
  IndexOutOfRange,
  AbsentRedirected,
  AbsentNoAccelerator,
  RedirectsDisabled,
  RedirectsDisabledAbsent,
};
const char* reason_text(Reason reason) noexcept;

struct Decision {
  bool has_request = false;
  DeviceSpec requested{};
  DeviceSpec resolved{};
  Action action = Action::Honored;
  Reason reason = Reason::RequestedPresent;
  Via via = Via::Create;

  std::string requested_str() const { return has_request ? requested.str() : std::string("none"); }
  // "cuda:3 -> cuda:0 [substituted] device index out of range ..."
  std::string describe() const;
};

}  // namespace crossdev
