#pragma once
// Loads a matrix file or a folder of them (its *.yaml, sorted; subfolders such as
// expectations/ are not matrices) and validates every row before anything runs, so a
// malformed matrix fails fast with file:line and exit code 2.
#include <string>
#include <vector>

#include "runner/matrix_types.h"

namespace crossdev::conformance {

// Throws YamlError for anything it cannot read: a missing or unreadable path or folder, a
// *.yaml entry that is not a regular file (a FIFO, a looping symlink), a file above max_bytes.
std::vector<MatrixFile> load_catalog(const std::string& path, std::uintmax_t max_bytes = kDefaultMaxMatrixBytes);

}  // namespace crossdev::conformance
