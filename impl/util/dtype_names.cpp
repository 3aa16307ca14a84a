#include "util/dtype_names.h"

namespace crossdev {
namespace {

struct DtypeName {
  const char* name;
  c10::ScalarType dtype;
};
// Canonical names first (the reverse lookup takes the first match), then aliases.
constexpr DtypeName kDtypeNames[] = {
    {"float32", c10::ScalarType::Float},          {"float64", c10::ScalarType::Double},
    {"float16", c10::ScalarType::Half},           {"bfloat16", c10::ScalarType::BFloat16},
    {"complex64", c10::ScalarType::ComplexFloat}, {"complex128", c10::ScalarType::ComplexDouble},
    {"int64", c10::ScalarType::Long},             {"int32", c10::ScalarType::Int},
    {"int16", c10::ScalarType::Short},            {"int8", c10::ScalarType::Char},
    {"uint8", c10::ScalarType::Byte},             {"bool", c10::ScalarType::Bool},
    {"float", c10::ScalarType::Float},            {"double", c10::ScalarType::Double},
    {"half", c10::ScalarType::Half},              {"long", c10::ScalarType::Long},
};

}  // namespace

std::optional<c10::ScalarType> dtype_from_name(std::string_view name) noexcept {
  if (name.rfind("torch.", 0) == 0) name.remove_prefix(6);
  for (const auto& row : kDtypeNames)
    if (name == row.name) return row.dtype;
  return std::nullopt;
}

const char* dtype_name(c10::ScalarType dtype) noexcept {
  for (const auto& row : kDtypeNames)
    if (dtype == row.dtype) return row.name;
  return c10::toString(dtype);
}

const char* all_dtype_names() noexcept {
  return "float32, float64, float16, bfloat16, complex64, complex128, int64, int32, int16, int8, uint8, bool";
}

bool is_matrix_float_dtype(c10::ScalarType dtype) noexcept {
  return dtype == c10::ScalarType::Half || dtype == c10::ScalarType::BFloat16 || dtype == c10::ScalarType::Float ||
         dtype == c10::ScalarType::Double;
}

std::optional<c10::ScalarType> matrix_float_dtype_from_name(std::string_view name) noexcept {
  const auto dtype = dtype_from_name(name);
  if (!dtype || !is_matrix_float_dtype(*dtype) || name != dtype_name(*dtype)) return std::nullopt;
  return dtype;
}

const char* matrix_float_dtype_names() noexcept { return "float16, bfloat16, float32, float64"; }

}  // namespace crossdev
