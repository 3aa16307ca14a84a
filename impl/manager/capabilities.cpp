#include "manager/capabilities.h"

#include <algorithm>
#include <array>

namespace crossdev::manager {
namespace {

struct DtypeName {
  const char* name;
  c10::ScalarType dtype;
};
// torch's Python spellings; aliases (float, double, half) map onto the same dtypes.
constexpr std::array<DtypeName, 16> kDtypeNames = {{
    {"float32", c10::ScalarType::Float},       {"float64", c10::ScalarType::Double},
    {"float16", c10::ScalarType::Half},        {"bfloat16", c10::ScalarType::BFloat16},
    {"complex64", c10::ScalarType::ComplexFloat}, {"complex128", c10::ScalarType::ComplexDouble},
    {"int64", c10::ScalarType::Long},          {"int32", c10::ScalarType::Int},
    {"int16", c10::ScalarType::Short},         {"int8", c10::ScalarType::Char},
    {"uint8", c10::ScalarType::Byte},          {"bool", c10::ScalarType::Bool},
    {"float", c10::ScalarType::Float},         {"double", c10::ScalarType::Double},
    {"half", c10::ScalarType::Half},           {"long", c10::ScalarType::Long},
}};

}  // namespace

bool Capabilities::supports(c10::ScalarType dtype) const {
  return std::find(unsupported_dtypes.begin(), unsupported_dtypes.end(), dtype) == unsupported_dtypes.end();
}

std::string dtype_name(c10::ScalarType dtype) {
  for (const auto& entry : kDtypeNames)
    if (entry.dtype == dtype) return entry.name;
  return c10::toString(dtype);
}

std::optional<c10::ScalarType> dtype_from_name(std::string_view name) {
  if (name.rfind("torch.", 0) == 0) name.remove_prefix(6);
  for (const auto& entry : kDtypeNames)
    if (name == entry.name) return entry.dtype;
  return std::nullopt;
}

const char* dtype_name_list() noexcept {
  return "float32, float64, float16, bfloat16, complex64, complex128, int64, int32, int16, int8, uint8, bool";
}

}  // namespace crossdev::manager
