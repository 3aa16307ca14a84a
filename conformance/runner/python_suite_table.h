#pragma once
// The suites defined in Python, one record each, from python/crossdev/python_suites.json (embedded at
// build time: cmake/CrossdevPythonSuites.cmake; the worker reads the same file, crossdev/python_suites.py).
// One shim runs every record (suites/python_suite.cpp): adding a Python suite is a record there and
// its Python module (docs/ARCHITECTURE.md, "A Python suite").
#include <memory>
#include <string>
#include <vector>

namespace crossdev::conformance {

// A row key's type: how the engine checks its value and writes it into the worker's row.
enum class RowKeyType { Globs, DeviceKinds, Names, List, String, Factory, Choice, Count, Seconds, Boolean, Tolerance };

struct RowKeySpec {
  std::string key;
  RowKeyType type = RowKeyType::String;
  bool required = false;
  bool to_worker = false;
  std::string expected;              // the end of the message of a refused value ("" for the type's own)
  std::vector<std::string> choices;  // Names: the worker checks them; Choice: the engine does
  double default_number = 0;         // Count / Seconds: the value of an absent key (the engine's, e.g. case_timeout)
  bool has_default = false;
};

struct PythonSuiteSpec {
  std::string name, summary;
  std::string run_module;    // the Python module that serves its requests (check, run, plan_cases)
  std::string check_module;  // a lighter, torch-free module for `check` requests ("" for run_module)
  std::string bad_row_key;     // where a `fatal` answer to a row's plan or check is reported (file:line)
  bool planned_by_worker = true;  // else one case per device kind of the row, "<row>/<kind>"
  std::size_t kind_segment = 0;   // the segment of a case id (0: the row id) that is its device kind
  std::vector<std::string> expectation_statuses;  // what an entry of expectations/<suite>/<kind>.yaml may be
  bool shards_its_cases = false;
  // A crashed case is run once more alone, its worker writing each sample before the call: the crash case
  // then holds the sample it died on, for `crossdev repro` (docs/repro.md, "A crash").
  bool records_crashes = false;
  std::vector<RowKeySpec> keys;

  const RowKeySpec* find_key(const std::string& key) const;
  bool allows_expectation(const std::string& status) const;
};

// Every record, in the file's order. A malformed table is a build defect: it throws std::logic_error
// naming the record and field (test_python_suite_table.cpp reads it at test time).
const std::vector<PythonSuiteSpec>& python_suite_specs();

// The table from `json` (for tests).
std::vector<PythonSuiteSpec> parse_python_suite_specs(const std::string& json);

// The Suite of one record (suites/python_suite.cpp); `spec` must outlive it. The engine's table makes one
// of each record of python_suites.json; a test makes one of a throwaway record (test_python_suite_recipe.cpp).
class Suite;
std::unique_ptr<Suite> make_python_suite(const PythonSuiteSpec& spec);

const char* row_key_type_name(RowKeyType type);

}  // namespace crossdev::conformance
