#include "manager/capabilities.h"

#include "util/dtype_names.h"

#include <algorithm>

namespace crossdev::manager {

bool Capabilities::supports(c10::ScalarType dtype) const {
  return std::find(unsupported_dtypes.begin(), unsupported_dtypes.end(), dtype) == unsupported_dtypes.end();
}

std::string dtype_name(c10::ScalarType dtype) { return crossdev::dtype_name(dtype); }

std::optional<c10::ScalarType> dtype_from_name(std::string_view name) { return crossdev::dtype_from_name(name); }

const char* dtype_name_list() noexcept { return all_dtype_names(); }

}  // namespace crossdev::manager
