#include "runner/suite.h"

#include <memory>
#include <vector>

#include "runner/suite_table.h"

namespace crossdev::conformance {
namespace {

const std::vector<std::unique_ptr<Suite>>& suites() {
  static const std::vector<std::unique_ptr<Suite>> table = builtin_suites();
  return table;
}

}  // namespace

const Suite* find_suite(const std::string& name) {
  for (const auto& s : suites())
    if (name == s->name()) return s.get();
  return nullptr;
}

std::string suite_names() {
  std::string out;
  for (const auto& s : suites()) out += (out.empty() ? "" : ", ") + std::string(s->name());
  return out;
}

const SuiteSchema* schema_for_suite(const std::string& name) {
  const Suite* s = find_suite(name);
  return s ? &s->schema() : nullptr;
}

std::vector<PlannedCase> Suite::plan(const Row& row, const RunContext&) const {
  PlannedCase c;
  c.id = row.id();
  return {c};
}

void Suite::check_rows(const std::vector<const Row*>&, const RunContext&) const {}

CaseResult result_for(const Row& row, const Suite& suite) {
  CaseResult r;
  r.id = row.id();
  r.row_id = row.id();
  r.suite = suite.name();
  r.source = row.source();
  r.intent = row.intent();
  r.file = row.file();
  r.line = row.where().line;
  return r;
}

}  // namespace crossdev::conformance
