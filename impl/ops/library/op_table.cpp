// The op table: the definitions CROSSDEV_REGISTER_OP added, in registration order. Filled during
// static initialization of this library (one op.cpp at a time) and read-only afterwards; each row's
// predicate lists (OpDefinition::checks) are built here, once.
#include <deque>

#include "ops/library/op_predicates.h"
#include "ops/library/register_op.h"

namespace crossdev::ops {
namespace {

struct Table {
  std::deque<OpDefinition> owned;  // deque: addresses stay valid as rows are added
  std::vector<const OpDefinition*> rows;
};

Table& table() {
  static Table t;
  return t;
}

}  // namespace

const OpDefinition& library::add_definition(OpDefinition definition) {
  Table& t = table();
  TORCH_CHECK(find_definition(definition.name) == nullptr, "crossdev op '", definition.name, "' registered twice");
  t.owned.push_back(std::move(definition));
  OpDefinition& added = t.owned.back();
  added.checks = build_checks(added);  // after the move: a predicate may hold the row's address
  t.rows.push_back(&added);
  return added;
}

const std::vector<const OpDefinition*>& all_definitions() { return table().rows; }

const OpDefinition* find_definition(std::string_view name) {
  for (const OpDefinition* def : table().rows) {
    if (name == def->name) return def;
  }
  return nullptr;
}

}  // namespace crossdev::ops
