#include "manager/capabilities.h"

#include "util/dtype_names.h"

#include <algorithm>

namespace crossdev::manager {

bool Capabilities::supports(c10::ScalarType dtype) const {
  return std::find(unsupported_dtypes.begin(), unsupported_dtypes.end(), dtype) == unsupported_dtypes.end();
}

}  // namespace crossdev::manager
