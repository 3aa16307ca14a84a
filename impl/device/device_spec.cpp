#include "device/device_spec.h"

#include <array>
#include <limits>

namespace crossdev {
namespace {

bool is_name_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

// Types torch.device accepts that crossdev does not target: named so the error can say
// "valid in PyTorch, not a crossdev device" instead of "unknown".
constexpr std::array<const char*, 15> kOtherTorchTypes = {
    "ipu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
    "lazy", "vulkan", "meta", "hpu", "mtia", "privateuseone"};

// Built from the kind table (device_kind.cpp), so a new kind shows up here with no edit.
const std::string& grammar() {
  static const std::string text = "expected 'type[:index]' with type one of " + valid_kind_list() +
                                  " and index a non-negative integer without sign or leading zeros, or the CPU "
                                  "override 'cpu:-1'";
  return text;
}

ParseStatus fail(ParseStatus status, std::string_view text, std::string* error_out, std::string_view detail) {
  if (error_out) {
    std::string msg = "invalid device string '";
    msg.append(text).append("': ").append(detail);
    *error_out = std::move(msg);
  }
  return status;
}

}  // namespace

ParseStatus try_parse_device(std::string_view text, DeviceSpec& out, std::string* error_out) {
  if (text.empty()) return fail(ParseStatus::Empty, text, error_out, std::string("empty; ") + grammar());
  if (text == "cpu:-1") {
    out = DeviceSpec::override_request();
    return ParseStatus::Ok;
  }
  // Same state machine as c10::Device(const std::string&): name chars, then ':' and digits.
  const std::size_t colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  if (name.empty()) return fail(ParseStatus::Syntax, text, error_out, grammar());
  for (char c : name)
    if (!is_name_char(c)) return fail(ParseStatus::Syntax, text, error_out, grammar());
  int index = -1;
  if (colon != std::string_view::npos) {
    const std::string_view digits = text.substr(colon + 1);
    if (digits.empty()) return fail(ParseStatus::Syntax, text, error_out, grammar());
    if (digits.size() > 1 && digits[0] == '0') return fail(ParseStatus::Syntax, text, error_out, grammar());
    long long value = 0;
    for (char c : digits) {
      if (!is_digit(c)) {
        const bool negative_override = digits.size() > 1 && digits[0] == '-';
        return fail(negative_override ? ParseStatus::BadOverride : ParseStatus::Syntax, text, error_out,
                    negative_override ? std::string("negative indices are not devices; the only negative form is "
                                                    "the CPU override 'cpu:-1'")
                                      : std::string(grammar()));
      }
      value = value * 10 + (c - '0');
      if (value > std::numeric_limits<std::int8_t>::max()) {
        return fail(ParseStatus::IndexRange, text, error_out,
                    std::string("device index out of range; c10::DeviceIndex holds 0..127 (torch.device would "
                                "silently wrap this index)"));
      }
    }
    index = static_cast<int>(value);
  }
  const auto kind = kind_from_name(name);
  if (!kind) {
    for (const char* other : kOtherTorchTypes) {
      if (name == other) {
        return fail(ParseStatus::UnsupportedType, text, error_out,
                    std::string("device type '").append(name).append(
                        "' is valid in PyTorch but not a crossdev target; expected one of ") +
                        valid_kind_list());
      }
    }
    return fail(ParseStatus::UnknownType, text, error_out,
                std::string("unknown device type '").append(name).append("'; expected one of ") + valid_kind_list() +
                    " (device types are case-sensitive)");
  }
  out = DeviceSpec::of(*kind, index);
  return ParseStatus::Ok;
}

DeviceSpec parse_device(std::string_view text) {
  DeviceSpec spec;
  std::string error;
  if (try_parse_device(text, spec, &error) != ParseStatus::Ok) throw DeviceSpecError(error);
  return spec;
}

bool DeviceSpec::same_device(const DeviceSpec& other) const noexcept {
  if (kind != other.kind || cpu_override != other.cpu_override) return false;
  if (kind_info(kind).single_device) return effective_index() == other.effective_index();
  return index == other.index;
}

std::string DeviceSpec::str() const {
  if (cpu_override) return "cpu:-1";
  std::string s = kind_name(kind);
  if (has_index()) s.append(":").append(std::to_string(index));
  return s;
}

c10::Device DeviceSpec::to_c10() const {
  return c10::Device(kind_info(kind).c10_type, cpu_override ? c10::DeviceIndex(-1)
                                                            : static_cast<c10::DeviceIndex>(index));
}

DeviceSpec DeviceSpec::from_c10(const c10::Device& device) {
  const auto kind = kind_from_c10(device.type());
  if (!kind) {
    throw DeviceSpecError("device '" + device.str() + "' is not a crossdev target; expected one of " +
                          valid_kind_list());
  }
  return DeviceSpec::of(*kind, device.has_index() ? device.index() : -1);
}

}  // namespace crossdev
