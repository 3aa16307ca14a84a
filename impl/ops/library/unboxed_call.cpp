#include "ops/library/unboxed_call.h"

#include <c10/util/Exception.h>

#include <string>
#include <utility>
#include <vector>

namespace crossdev::ops::library {
namespace {

// Filled during static registration (one op.cpp at a time), read-only afterwards.
std::vector<std::pair<std::string, UnboxedCall>>& calls() {
  static std::vector<std::pair<std::string, UnboxedCall>> table;
  return table;
}

}  // namespace

void register_unboxed_call(std::string_view op, UnboxedCall call) {
  TORCH_CHECK(unboxed_call(op) == nullptr, "crossdev op '", op, "': its unboxed call is registered twice");
  calls().emplace_back(std::string(op), call);
}

UnboxedCall unboxed_call(std::string_view op) {
  for (const auto& [name, call] : calls()) {
    if (name == op) return call;
  }
  return nullptr;
}

}  // namespace crossdev::ops::library
