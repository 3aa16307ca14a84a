// The suites defined in Python are records of python/crossdev/python_suites.json, run by one shim
// (suites/python_suite.cpp): the engine's suite table, schemas and case kinds come from the records,
// a malformed record is refused naming it, and a row's values are checked by their key's type.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "runner/python_suite_table.h"
#include "runner/suite.h"
#include "suites/expectation_files.h"

namespace crossdev::conformance {
namespace {

TEST(PythonSuites, EachRecordIsASuiteWhoseSchemaIsItsKeys) {
  const auto& specs = python_suite_specs();
  ASSERT_GE(specs.size(), 3u);
  for (const auto& spec : specs) {
    const Suite* suite = find_suite(spec.name);
    ASSERT_NE(suite, nullptr) << spec.name;
    std::vector<std::string> required, optional;
    for (const auto& k : spec.keys) (k.required ? required : optional).push_back(k.key);
    EXPECT_EQ(suite->schema().required, required) << spec.name;
    EXPECT_EQ(suite->schema().optional, optional) << spec.name;
    EXPECT_EQ(suite->shards_its_cases(), spec.shards_its_cases) << spec.name;
    EXPECT_NE(suite_names().find(spec.name), std::string::npos);
  }
}

TEST(PythonSuites, TheEmbeddedTableIsTheSourceFile) {
  std::ifstream in(std::string(CROSSDEV_SOURCE_DIR) + "/python/crossdev/python_suites.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto from_file = parse_python_suite_specs(text);
  ASSERT_EQ(from_file.size(), python_suite_specs().size()) << "rebuild: the JSON changed since the engine was built";
  for (std::size_t i = 0; i < from_file.size(); ++i) {
    EXPECT_EQ(from_file[i].name, python_suite_specs()[i].name);
    EXPECT_EQ(from_file[i].keys.size(), python_suite_specs()[i].keys.size()) << from_file[i].name;
  }
}

std::string record(const std::string& fields, const std::string& keys) {
  return R"({"suites": [{"name": "t", "summary": "s", "run_module": "m", "bad_row_key": "devices", "case_id": ["row", "kind"],
             "expectations": [], )" + fields + R"(, "keys": [)" + keys + "]}]}";
}

std::string refusal(const std::string& json) {
  try {
    parse_python_suite_specs(json);
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return "";
}

TEST(PythonSuites, AMalformedRecordIsRefusedNamingItAndWhatWasExpected) {
  const std::string devices = R"({"key": "devices", "type": "device_kinds", "required": true})";
  EXPECT_EQ(refusal(record(R"("planned_by": "worker")", devices)), "");
  const std::string type = refusal(record(R"("planned_by": "worker")", devices + R"(, {"key": "x", "type": "float"})"));
  EXPECT_NE(type.find("suites[0] (t) key 'x': unknown type 'float'; expected one of globs, device_kinds"), std::string::npos) << type;
  const std::string planned = refusal(record(R"("planned_by": "engine")", devices));
  EXPECT_NE(planned.find("planned_by is worker or device_kinds, not 'engine'"), std::string::npos) << planned;
  const std::string no_devices = refusal(record(R"("planned_by": "worker")", R"({"key": "devices", "type": "list"})"));
  EXPECT_NE(no_devices.find("a 'devices' key of type device_kinds"), std::string::npos) << no_devices;
  const std::string choice = refusal(record(R"("planned_by": "worker")", devices + R"(, {"key": "c", "type": "choice"})"));
  EXPECT_NE(choice.find("a choice without choices"), std::string::npos) << choice;
  std::string no_module = record(R"("planned_by": "worker")", devices);
  no_module.replace(no_module.find(R"("run_module": "m", )"), std::string(R"("run_module": "m", )").size(), "");
  const std::string module = refusal(no_module);
  EXPECT_NE(module.find("suites[0] (t): missing 'run_module'"), std::string::npos) << module;
}

TEST(PythonSuites, ACaseKindIsTheSegmentItsRecordNamesWithoutTheCapability) {
  EXPECT_EQ(kind_of_case("r", "r/add/cpu@avx2/float32/forward", 2), "cpu");
  EXPECT_EQ(kind_of_case("r", "r/nn.functional.gelu/mps/float32/backward/inplace", 2), "mps");
  EXPECT_EQ(kind_of_case("r", "r/mps/float32", 1), "mps");
  EXPECT_EQ(kind_of_case("r", "r/xla", 1), "xla");
  EXPECT_EQ(kind_of_case("r", "r", 1), "") << "the row's own result has no kind";
  EXPECT_EQ(kind_of_case("r", "other/mps/float32", 1), "");
  EXPECT_EQ(kind_of_case("r", "r/add", 2), "");
  for (const auto& spec : python_suite_specs()) EXPECT_GE(spec.kind_segment, 1u) << spec.name;
}

}  // namespace
}  // namespace crossdev::conformance
