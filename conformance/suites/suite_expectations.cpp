#include "suites/suite_expectations.h"

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "device/device_kind.h"
#include "runner/python_suite_table.h"
#include "suites/expectation_files.h"

namespace crossdev::conformance {
namespace {

std::string real_path(const std::string& path) {
  char resolved[PATH_MAX];
  return ::realpath(path.c_str(), resolved) ? std::string(resolved) : path;
}

std::string folder_of(const std::string& matrix_file) {
  return std::filesystem::path(real_path(matrix_file)).parent_path().string();
}

// Whether every matrix file of `folder` is among the files run whole.
bool folder_run_whole(const std::string& folder, const std::set<std::string>& whole_real_paths) {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string ext = it->path().extension().string();
    if ((ext != ".yaml" && ext != ".yml") || std::filesystem::is_directory(it->path(), ec)) continue;
    if (!whole_real_paths.count(real_path(it->path().string()))) return false;
  }
  return !ec;
}

}  // namespace

std::vector<StaleExpectation> unmatched_expectations(const std::vector<MatrixFile>& run,
                                                     const std::set<std::string>& whole_files,
                                                     const std::vector<CaseResult>& results, const RunContext& ctx,
                                                     bool interrupted) {
  std::vector<StaleExpectation> stale;
  if (interrupted) return stale;
  std::set<std::string> whole_real_paths;
  for (const auto& f : whole_files) whole_real_paths.insert(real_path(f));
  for (const PythonSuiteSpec& spec : python_suite_specs()) {
    if (spec.expectation_statuses.empty()) continue;  // a suite whose record allows no expectation file
    // folder -> the files of this suite run from it (in run order)
    std::map<std::string, std::vector<const MatrixFile*>> folders;
    for (const auto& file : run)
      if (file.suite == spec.name) folders[folder_of(file.path)].push_back(&file);
    for (const auto& [folder, files] : folders) {
      if (!folder_run_whole(folder, whole_real_paths)) continue;
      std::set<std::string> row_ids;
      for (const MatrixFile* f : files)
        for (const Row& row : f->rows) row_ids.insert(row.id());
      bool finished = true;
      std::map<std::string, std::vector<std::string>> ids_by_kind;
      for (const CaseResult& r : results) {
        if (r.suite != spec.name || !row_ids.count(r.row_id)) continue;
        if (r.id == r.row_id) finished = false;  // a row-level result: the row did not run to its end
        const std::string kind = kind_of_case(r.row_id, r.id, spec.kind_segment);
        if (!kind.empty()) ids_by_kind[kind].push_back(r.id);
      }
      if (!finished) continue;
      std::set<std::string> kinds;  // every kind a row of the folder names (a kind with no case stays unjudged)
      for (const MatrixFile* f : files)
        for (const Row& row : f->rows)
          for (const auto& kind : row.str_list("devices")) kinds.insert(kind);
      for (const std::string& kind : kinds) {
        const std::string execution = execution_of(ctx, kind);
        if (execution.empty()) continue;
        const parity::ExpectationFile& file =
            cached_expectations(expectations_path(files.front()->path, spec.name, kind));
        for (const parity::Expectation* e : file.stale(ids_by_kind[kind])) {
          if (!e->execution.empty() && e->execution != execution) continue;  // not this host's to judge
          stale.push_back({e->where(), e->match, parity::expected_status_name(e->status), e->reason, kind, spec.name});
        }
      }
    }
  }
  return stale;
}

std::string describe_stale(const StaleExpectation& s) {
  return s.where + ": stale expectation '" + s.match + "' (" + s.status + ", kind " + s.device_kind +
         ") matches no case of this run, which ran every " + s.suite + " row of its folder: remove it "
         "(`crossdev expectations accept` drops it)";
}

}  // namespace crossdev::conformance
