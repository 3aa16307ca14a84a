#pragma once
// The one table of dtype spellings crossdev reads and writes, python/crossdev/dtypes.json (generated
// into util/dtype_names.inc by cmake/CrossdevDtypes.cmake; Python reads the same file, crossdev/dtypes.py):
// torch's Python names ("float32", "bfloat16", "complex128", ...; a "torch." prefix and the table's
// aliases float, double, half, long are accepted). Matrices, the manager, the parity harness and the benchmarks all
// parse through it; each area only narrows which dtypes it allows.
#include <optional>
#include <string_view>

#include <c10/core/ScalarType.h>

namespace crossdev {

std::optional<c10::ScalarType> dtype_from_name(std::string_view name) noexcept;
const char* dtype_name(c10::ScalarType dtype) noexcept;  // canonical name; c10's for dtypes not in the table
const char* all_dtype_names() noexcept;                  // for "expected one of ..." messages, in the table's order

// The floating dtypes the op matrices and benchmarks cover, in their canonical order. Matrix
// rows must use the canonical spelling (case ids are built from it), so aliases are refused here.
bool is_matrix_float_dtype(c10::ScalarType dtype) noexcept;
std::optional<c10::ScalarType> matrix_float_dtype_from_name(std::string_view name) noexcept;
const char* matrix_float_dtype_names() noexcept;  // the table's floating ones: "float16, bfloat16, float32, float64"

}  // namespace crossdev
