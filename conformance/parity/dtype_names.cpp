#include "parity/dtype_names.h"

namespace crossdev::parity {
namespace {

struct DtypeName {
  const char* name;
  c10::ScalarType dtype;
};

// The floating dtypes the parity matrix covers; order is the order of valid_dtype_list().
constexpr DtypeName kDtypeNames[] = {
    {"float16", c10::ScalarType::Half},
    {"bfloat16", c10::ScalarType::BFloat16},
    {"float32", c10::ScalarType::Float},
    {"float64", c10::ScalarType::Double},
};

}  // namespace

std::optional<c10::ScalarType> dtype_from_name(std::string_view name) noexcept {
  for (const auto& row : kDtypeNames)
    if (name == row.name) return row.dtype;
  return std::nullopt;
}

const char* dtype_name(c10::ScalarType dtype) noexcept {
  for (const auto& row : kDtypeNames)
    if (dtype == row.dtype) return row.name;
  return c10::toString(dtype);
}

const char* valid_dtype_list() noexcept { return "float16, bfloat16, float32, float64"; }

}  // namespace crossdev::parity
