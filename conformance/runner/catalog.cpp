#include "runner/catalog.h"

#include <algorithm>
#include <filesystem>
#include <string_view>
#include <unordered_map>

#include "runner/suite.h"

namespace crossdev::conformance {

std::vector<MatrixFile> load_catalog(const std::string& path, std::uintmax_t max_bytes) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (status.type() == fs::file_type::not_found) throw YamlError({path, 0}, "no such matrix file or folder");
  if (ec) throw YamlError({path, 0}, "cannot access matrix file or folder: " + ec.message());
  if (fs::is_directory(status)) {
    // Never the throwing iterator: an unreadable folder or a looping symlink is bad input (exit 2).
    fs::directory_iterator it(path, ec), end;
    if (ec) throw YamlError({path, 0}, "cannot read matrix folder: " + ec.message());
    for (; it != end; it.increment(ec)) {
      const auto ext = it->path().extension().string();
      if (ext != ".yaml" && ext != ".yml") continue;
      std::error_code entry_ec;
      const fs::file_status entry = it->status(entry_ec);  // follows symlinks
      if (entry_ec) {
        throw YamlError({it->path().string(), 0}, "cannot read matrix file: " + entry_ec.message() +
                                                        "; expected a regular file");
      }
      if (fs::is_directory(entry)) continue;  // a folder named *.yaml is not a matrix
      if (!fs::is_regular_file(entry)) {
        throw YamlError({it->path().string(), 0}, "cannot read matrix file: not a regular file; expected a regular file");
      }
      files.push_back(it->path().string());
    }
    if (ec) throw YamlError({path, 0}, "cannot read matrix folder: " + ec.message());
    std::sort(files.begin(), files.end());
    if (files.empty()) throw YamlError({path, 0}, "no *.yaml matrix files in this folder");
  } else {
    files.push_back(path);  // load_matrix_file refuses anything but a regular file
  }

  std::vector<MatrixFile> catalog;
  // Ids seen so far -> their row (rows do not move once loaded: a vector's buffer survives moves).
  std::unordered_map<std::string_view, const Row*> first_seen;
  for (const auto& file : files) {
    MatrixFile matrix = load_matrix_file(file, &schema_for_suite, max_bytes);
    const Suite* suite = find_suite(matrix.suite);
    first_seen.reserve(first_seen.size() + matrix.rows.size());
    for (const Row& row : matrix.rows) {
      auto [it, inserted] = first_seen.emplace(row.id(), &row);
      if (!inserted) row.fail("id", "duplicate id '" + row.id() + "' (first defined at " + it->second->where().str() + ")");
      suite->validate(row);
    }
    catalog.push_back(std::move(matrix));
  }
  return catalog;
}

}  // namespace crossdev::conformance
