#pragma once
// Value grammars of matrices/bench/bench.yaml, each parsed by table. Every parser returns
// std::nullopt on a bad value so the caller can say file:line and list what was expected.
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/traffic_model.h"
#include "util/dtype_names.h"

namespace crossdev::bench {

enum class Profile : std::uint8_t { Default, Long };
std::optional<Profile> profile_from_name(std::string_view name) noexcept;  // "default", "long"
const char* profile_name(Profile profile) noexcept;
const char* profile_names() noexcept;  // "default, long"

// Dtypes: util/dtype_names.h's matrix floats (matrix_float_dtype_from_name), as in the ops matrix.

std::optional<Pass> pass_from_name(std::string_view name) noexcept;  // "fwd", "fwd_bwd"
const char* pass_names() noexcept;

// Element counts: "4096", "256K" (x 1024), "8M" (x 1024^2). The label keeps the spelling
// normalised so benchmark names stay stable ("8M", not "8388608").
struct Size {
  std::int64_t elements = 0;
  std::string label;
};
std::optional<Size> size_from_text(std::string_view text) noexcept;

}  // namespace crossdev::bench
