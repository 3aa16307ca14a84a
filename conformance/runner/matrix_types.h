#pragma once
// The engine reads matrices with crossdev_matrix (conformance/matrix/matrix_file.h, on crossdev_yaml); these are its names
// for that library's rows, files and schemas. Errors are crossdev::YamlError.
#include "matrix/matrix_file.h"

namespace crossdev::conformance {

using yaml::kDefaultMaxMatrixBytes;
using yaml::load_matrix_file;
using yaml::MatrixFile;
using yaml::Row;
using yaml::SuiteSchema;

}  // namespace crossdev::conformance
