#pragma once
// Where crossdev's data files are: the built-in catalog (matrices/), its expectations and
// matrices/data/ (error patterns). One answer for every front end, the CLI and the Python module:
//   installed (the wheel):  <folder of libcrossdev_core.so>/../matrices  (crossdev/lib -> crossdev/matrices)
//   a build tree:           the source tree's matrices/ the build was configured from
// found at run time from where libcrossdev_core.so is loaded, so no path into a build tree is needed
// by an installed package.
#include <string>

namespace crossdev {

// The built-in catalog folder (`crossdev run` with no --matrix, when the working folder has no matrices/).
std::string builtin_matrix_dir();

// A file under the built-in catalog, e.g. data_file("data/error_patterns.yaml").
std::string data_file(const std::string& relative);

}  // namespace crossdev
