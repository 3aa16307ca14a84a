#include "ops/library/op_schemas.h"

#include <ATen/core/operator_name.h>
#include <c10/util/Exception.h>

namespace crossdev::ops::library {
namespace {

struct SplitSchema {
  std::string name;       // "modulate"
  std::string arguments;  // "Tensor x, Tensor shift, Tensor scale"
};

// Splits "name(args) -> Tensor" and checks the one shape every crossdev schema has.
SplitSchema split(const OpDefinition& definition) {
  const std::string_view schema = definition.schema;
  const std::size_t open = schema.find('(');
  const std::size_t close = schema.rfind(')');
  TORCH_CHECK(open != std::string_view::npos && close != std::string_view::npos && close > open,
              "crossdev op '", definition.name, "': schema '", schema, "' is not 'name(arguments) -> Tensor'");
  const std::string_view returns = schema.substr(close + 1);
  TORCH_CHECK(returns == " -> Tensor", "crossdev op '", definition.name, "': schema '", schema,
              "' must return exactly one Tensor");
  SplitSchema out{std::string(schema.substr(0, open)), std::string(schema.substr(open + 1, close - open - 1))};
  TORCH_CHECK(out.name == definition.name, "crossdev op '", definition.name, "': schema names '", out.name, "'");
  return out;
}

}  // namespace

std::size_t differentiable_count(const OpDefinition& definition) {
  std::size_t n = 0;
  for (const InputSpec& in : definition.inputs) n += in.differentiable ? 1 : 0;
  return n;
}

std::string out_schema(const OpDefinition& definition) {
  const SplitSchema s = split(definition);
  const bool has_kwargs = s.arguments.find('*') != std::string::npos;
  return s.name + ".out(" + s.arguments + (has_kwargs ? ", " : ", *, ") + "Tensor(a!) out) -> ()";
}

bool has_training_mode(const OpDefinition& definition) {
  return split(definition).arguments.find("bool training") != std::string::npos;
}

std::string backward_name(const OpDefinition& definition) { return std::string(definition.name) + std::string(kBackwardSuffix); }

std::string backward_schema(const OpDefinition& definition) {
  const SplitSchema s = split(definition);
  const std::size_t n = differentiable_count(definition);
  std::string returns = n == 1 ? "Tensor" : "(";
  if (n != 1) {
    for (std::size_t i = 0; i < n; ++i) returns += i == 0 ? "Tensor" : ", Tensor";
    returns += ")";
  }
  return backward_name(definition) + "(Tensor grad_out, " + s.arguments + ") -> " + returns;
}

}  // namespace crossdev::ops::library
