#pragma once
// A Python suite's row keys by their type (runner/python_suite_table.h RowKeyType): the engine's check
// of a value at load time (a YamlError at the key's file:line, exit 2) and the value as the worker's
// row has it (docs/python-worker.md). The worker checks what only it can judge (op_db's names, a
// factory that imports, a name among a key's choices).
#include "runner/matrix_types.h"
#include "runner/python_suite_table.h"
#include "util/json.h"

namespace crossdev::conformance {

// Throws YamlError when the row's value of `key` is not one its type takes.
void validate_row_key(const Row& row, const RowKeySpec& key);

// Writes `key` (and what its type adds) into the worker's row object; the row has the key.
void write_row_key(json::Writer& w, const Row& row, const RowKeySpec& key);

}  // namespace crossdev::conformance
