#pragma once
// Loads a matrix file or a folder of them (its *.yaml, sorted; subfolders such as
// expectations/ are not matrices) and validates every row before anything runs, so a
// malformed matrix fails fast with file:line and exit code 2.
#include <string>
#include <vector>

#include "matrix/matrix.h"

namespace crossdev::conformance {

std::vector<MatrixFile> load_catalog(const std::string& path);  // throws MatrixError

}  // namespace crossdev::conformance
