#pragma once
// Reading matrix files with a size cap (crossdev run --max-matrix-bytes). load_matrix_file in
// matrix.h reads with the default cap.
#include <cstdint>
#include <string>

#include "matrix/matrix.h"

namespace crossdev::conformance {

// Matrix files above this size are refused.
inline constexpr std::uintmax_t kDefaultMaxMatrixBytes = std::uintmax_t{64} << 20;  // 64 MiB

// load_matrix_file, reading only a regular file of at most max_bytes: a FIFO, a device or a
// /proc file is a MatrixError at once (no blocking open, no unbounded read).
MatrixFile load_matrix_file(const std::string& path, const SuiteSchema* (*schema_for)(const std::string& suite),
                            std::uintmax_t max_bytes);

}  // namespace crossdev::conformance
