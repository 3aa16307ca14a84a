#include "parity/dtype_names.h"

#include "util/dtype_names.h"

namespace crossdev::parity {

// The parity matrix covers the floating dtypes only; spellings come from the core table.
std::optional<c10::ScalarType> dtype_from_name(std::string_view name) noexcept {
  return matrix_float_dtype_from_name(name);
}

const char* dtype_name(c10::ScalarType dtype) noexcept { return crossdev::dtype_name(dtype); }

const char* valid_dtype_list() noexcept { return matrix_float_dtype_names(); }

}  // namespace crossdev::parity
