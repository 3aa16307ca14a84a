#include "sim/unannotated_writes.h"

#include <array>
#include <string_view>

#include "sim/host_alias.h"

namespace crossdev::sim {
namespace {

struct UnannotatedWrite {
  std::string_view op;
  std::string_view overload;
  std::array<std::string_view, 2> args;  // the arguments it updates in place
};

// The one table (aten/src/ATen/native/native_functions.yaml: schemas without the write annotation).
constexpr std::array<UnannotatedWrite, 1> kUnannotatedWrites = {{
    {"aten::native_batch_norm", "", {"running_mean", "running_var"}},
}};

}  // namespace

void alias_unannotated_writes(const c10::FunctionSchema& schema, torch::jit::Stack& stack) {
  const c10::OperatorName& name = schema.operator_name();
  const auto& args = schema.arguments();
  const std::size_t base = stack.size() - args.size();
  for (const UnannotatedWrite& entry : kUnannotatedWrites) {
    if (entry.op != name.name || entry.overload != name.overload_name) continue;
    for (std::size_t i = 0; i < args.size(); ++i) {
      bool updated = false;
      for (std::string_view arg : entry.args) updated = updated || args[i].name() == arg;
      c10::IValue& v = stack[base + i];
      if (updated && v.isTensor() && v.toTensor().defined() && v.toTensor().is_privateuseone())
        v = host_alias(v.toTensor());
    }
  }
}

}  // namespace crossdev::sim
