#include "runner/catalog.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "runner/suite.h"

namespace crossdev::conformance {

std::vector<MatrixFile> load_catalog(const std::string& path) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (const auto& entry : fs::directory_iterator(path)) {
      const auto ext = entry.path().extension().string();
      if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml")) files.push_back(entry.path().string());
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) throw MatrixError({path, 0}, "no *.yaml matrix files in this folder");
  } else if (fs::exists(path, ec)) {
    files.push_back(path);
  } else {
    throw MatrixError({path, 0}, "no such matrix file or folder");
  }

  std::vector<MatrixFile> catalog;
  std::map<std::string, SourceLocation> first_seen;
  for (const auto& file : files) {
    MatrixFile matrix = load_matrix_file(file, &schema_for_suite);
    const Suite* suite = find_suite(matrix.suite);
    for (const Row& row : matrix.rows) {
      auto [it, inserted] = first_seen.emplace(row.id(), row.where());
      if (!inserted) row.fail("id", "duplicate id '" + row.id() + "' (first defined at " + it->second.str() + ")");
      suite->validate(row);
    }
    catalog.push_back(std::move(matrix));
  }
  return catalog;
}

}  // namespace crossdev::conformance
