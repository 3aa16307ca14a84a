#include "util/dtype_names.h"

#include <string>

#include "util/dtype_names.inc"  // CROSSDEV_DTYPES, CROSSDEV_DTYPE_ALIASES: python/crossdev/dtypes.json

namespace crossdev {
namespace {

struct DtypeName {
  const char* name;
  c10::ScalarType dtype;
  bool floating;  // a floating dtype the op matrices and benchmarks cover
};
// Canonical names in the table's order, then the aliases (the reverse lookup takes the first match).
#define CROSSDEV_DTYPE(name, type, floating) {name, c10::ScalarType::type, floating},
#define CROSSDEV_DTYPE_ALIAS(name, type) {name, c10::ScalarType::type, false},
constexpr DtypeName kDtypeNames[] = {CROSSDEV_DTYPES(CROSSDEV_DTYPE) CROSSDEV_DTYPE_ALIASES(CROSSDEV_DTYPE_ALIAS)};
#undef CROSSDEV_DTYPE_ALIAS
#define CROSSDEV_DTYPE_ALIAS(name, type) +1
constexpr std::size_t kNumCanonical = std::size(kDtypeNames) - (0 CROSSDEV_DTYPE_ALIASES(CROSSDEV_DTYPE_ALIAS));
#undef CROSSDEV_DTYPE_ALIAS
#undef CROSSDEV_DTYPE

std::string joined_names(bool floating_only) {
  std::string out;
  for (std::size_t i = 0; i < kNumCanonical; ++i)
    if (!floating_only || kDtypeNames[i].floating) out += (out.empty() ? "" : ", ") + std::string(kDtypeNames[i].name);
  return out;
}

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
  static const std::string names = joined_names(false);
  return names.c_str();
}

bool is_matrix_float_dtype(c10::ScalarType dtype) noexcept {
  for (std::size_t i = 0; i < kNumCanonical; ++i)
    if (kDtypeNames[i].dtype == dtype) return kDtypeNames[i].floating;
  return false;
}

std::optional<c10::ScalarType> matrix_float_dtype_from_name(std::string_view name) noexcept {
  const auto dtype = dtype_from_name(name);
  if (!dtype || !is_matrix_float_dtype(*dtype) || name != dtype_name(*dtype)) return std::nullopt;
  return dtype;
}

const char* matrix_float_dtype_names() noexcept {
  static const std::string names = joined_names(true);
  return names.c_str();
}

}  // namespace crossdev
