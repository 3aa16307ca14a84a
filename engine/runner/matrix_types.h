#pragma once
// The harness reads matrices with crossdev_yaml (impl/yaml/matrix_file.h); these are its names
// for that library's rows, files and schemas. Errors are crossdev::YamlError.
#include "yaml/matrix_file.h"

namespace crossdev::conformance {

using yaml::kDefaultMaxMatrixBytes;
using yaml::load_matrix_file;
using yaml::MatrixFile;
using yaml::Row;
using yaml::SuiteSchema;

}  // namespace crossdev::conformance
