#pragma once
// The dtype spellings matrices use ("float32", "bfloat16", ...), as one table, matching the
// names torch prints after "torch.".
#include <optional>
#include <string_view>

#include <c10/core/ScalarType.h>

namespace crossdev::parity {

std::optional<c10::ScalarType> dtype_from_name(std::string_view name) noexcept;
const char* dtype_name(c10::ScalarType dtype) noexcept;  // "float32"; c10's name for others
const char* valid_dtype_list() noexcept;                // "float16, bfloat16, float32, float64"

}  // namespace crossdev::parity
