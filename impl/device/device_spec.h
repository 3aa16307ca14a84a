#pragma once
// One grammar for device strings: `type[:index]`, plus the alias `tpu` (-> xla, seed 001) and
// the TorchDevice override `cpu:-1` (seed 002). For the plain PyTorch spellings the parser
// accepts exactly what torch.device accepts (case-sensitive, no spaces, no leading zeros,
// no sign), with one deliberate difference: torch wraps indices above 127 into
// c10::DeviceIndex (int8) — 'cuda:128' becomes cuda:-128 — which we reject instead.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include <c10/core/Device.h>

#include "device/device_kind.h"

namespace crossdev {

struct DeviceSpec {
  DeviceKind kind = DeviceKind::CPU;
  std::int16_t index = -1;      // -1: no index given
  bool cpu_override = false;    // the literal "cpu:-1"

  static constexpr DeviceSpec of(DeviceKind k, int idx = -1) noexcept {
    return DeviceSpec{k, static_cast<std::int16_t>(idx), false};
  }
  static constexpr DeviceSpec override_request() noexcept { return DeviceSpec{DeviceKind::CPU, -1, true}; }

  bool has_index() const noexcept { return index >= 0; }
  // None and 0 name the same device on single-device kinds (cpu, mps); seed 002, "Device Index Handling".
  int effective_index() const noexcept { return index < 0 ? 0 : index; }

  // Same physical device: compares effective indices on single-device kinds, exact ones elsewhere.
  bool same_device(const DeviceSpec& other) const noexcept;
  bool operator==(const DeviceSpec& o) const noexcept {
    return kind == o.kind && index == o.index && cpu_override == o.cpu_override;
  }
  bool operator!=(const DeviceSpec& o) const noexcept { return !(*this == o); }

  std::string str() const;                // "cuda:1", "mps", "cpu:-1"
  c10::Device to_c10() const;             // cpu:-1 maps to plain cpu: the override is policy, not a device
  static DeviceSpec from_c10(const c10::Device& device);  // throws DeviceSpecError for other kinds
};

class DeviceSpecError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

enum class ParseStatus : std::uint8_t { Ok, Empty, Syntax, UnknownType, UnsupportedType, IndexRange, BadOverride };

// Allocation-free on success; error_out (if given) receives the full message on failure.
ParseStatus try_parse_device(std::string_view text, DeviceSpec& out, std::string* error_out = nullptr);
DeviceSpec parse_device(std::string_view text);  // throws DeviceSpecError quoting the input

}  // namespace crossdev
