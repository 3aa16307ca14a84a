#include "parity/dispatcher_op.h"

#include <algorithm>

#include <ATen/core/stack.h>

#include "ops/library/call_marshal.h"

namespace crossdev::parity {
namespace {

std::string argument_names(const c10::FunctionSchema& schema) {
  std::string out;
  for (const c10::Argument& arg : schema.arguments()) out += (out.empty() ? "" : ", ") + arg.name();
  return out;
}

std::string returns_text(const c10::FunctionSchema& schema) {
  std::string out;
  for (const c10::Argument& r : schema.returns()) out += (out.empty() ? "" : ", ") + r.type()->str();
  return schema.returns().size() == 1 ? out : "(" + out + ")";
}

bool is_written(const c10::Argument& arg) { return arg.alias_info() != nullptr && arg.alias_info()->isWrite(); }

// "ns::op" or "ns::op.overload"; throws when it is neither.
c10::OperatorName parse_name(const std::string& text) {
  const auto sep = text.find("::");
  const auto dot = sep == std::string::npos ? std::string::npos : text.find('.', sep + 2);
  const std::string name = text.substr(0, dot);
  const std::string overload = dot == std::string::npos ? "" : text.substr(dot + 1);
  if (sep == std::string::npos || sep == 0 || name.size() <= sep + 2 || name.find("::", sep + 2) != std::string::npos ||
      (dot != std::string::npos && overload.empty())) {
    throw DispatcherOpError("'" + text + "' is not an operator name; expected \"namespace::op\" or \"namespace::op.overload\"");
  }
  return {name, overload};
}

std::string full_name(const c10::OperatorName& name) {
  return name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
}

c10::OperatorHandle find_registered(const std::string& text) {
  const c10::OperatorName name = parse_name(text);
  const auto handle = c10::Dispatcher::singleton().findSchema(name);
  if (handle) return *handle;
  // Name what the namespace does have: a typo and a library that was never loaded look different.
  const std::string ns = name.name.substr(0, name.name.find("::"));
  std::vector<std::string> in_namespace;
  for (const c10::OperatorName& other : c10::Dispatcher::singleton().getAllOpNames()) {
    if (other.name.compare(0, ns.size() + 2, ns + "::") == 0) in_namespace.push_back(full_name(other));
  }
  std::sort(in_namespace.begin(), in_namespace.end());
  std::string known;
  for (const std::string& n : in_namespace) known += (known.empty() ? "" : ", ") + n;
  throw DispatcherOpError(
      "operator " + text + " is not registered with the dispatcher" +
      (in_namespace.empty() ? "; nothing is registered in namespace '" + ns +
                                  "': load the library that registers it (crossdev run --load-library PATH) or "
                                  "import the Python module that defines it"
                            : "; namespace '" + ns + "' has: " + known));
}

}  // namespace

std::string schema_mismatch(const c10::FunctionSchema& candidate, const c10::FunctionSchema& inputs) {
  const std::string ref = inputs.name();
  const auto& args = candidate.arguments();
  const auto& ref_args = inputs.arguments();
  if (candidate.returns().size() != 1 || candidate.returns()[0].type()->kind() != c10::TypeKind::TensorType) {
    return "returns " + returns_text(candidate) + "; expected exactly one Tensor, as " + ref + " returns";
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (is_written(args[i])) {
      return "argument " + std::to_string(i) + " '" + args[i].name() + "' is written to (" + args[i].type()->str() +
             "(a!)); a candidate must leave its inputs alone";
    }
  }
  if (args.size() < ref_args.size()) {
    return "takes " + std::to_string(args.size()) + " argument" + (args.size() == 1 ? "" : "s") + " (" +
           argument_names(candidate) + "); " + ref + " passes " + std::to_string(ref_args.size()) + " (" +
           argument_names(inputs) + ")";
  }
  for (std::size_t i = 0; i < ref_args.size(); ++i) {
    if (!ref_args[i].type()->isSubtypeOf(*args[i].type())) {
      return "argument " + std::to_string(i) + " '" + args[i].name() + "' is " + args[i].type()->str() + "; " + ref +
             " passes " + ref_args[i].type()->str() + " ('" + ref_args[i].name() + "') there";
    }
  }
  for (std::size_t i = ref_args.size(); i < args.size(); ++i) {
    if (!args[i].default_value()) {
      return "argument " + std::to_string(i) + " '" + args[i].name() + "' has no default; " + ref + " passes only " +
             std::to_string(ref_args.size()) + " (" + argument_names(inputs) + ")";
    }
  }
  return "";
}

DispatcherOp::DispatcherOp(const std::string& name, const ops::OpSpec& op)
    : name_(name), handle_(find_registered(name)), inputs_(ops::library::operator_handle(op.name())) {
  const std::string why = schema_mismatch(handle_.schema(), inputs_.schema());
  if (!why.empty()) {
    throw DispatcherOpError("operator " + name_ + " does not take the inputs of crossdev::" + op.name() + ": " + why +
                            " (its schema: " + schema() + "; crossdev's: " + c10::toString(inputs_.schema()) + ")");
  }
}

std::string DispatcherOp::schema() const { return c10::toString(handle_.schema()); }

at::Tensor DispatcherOp::operator()(const ops::OpCall& call) const {
  torch::jit::Stack stack;
  ops::library::push_arguments(inputs_.schema(), call, stack);
  const auto& args = handle_.schema().arguments();
  for (std::size_t i = stack.size(); i < args.size(); ++i) stack.push_back(*args[i].default_value());
  handle_.callBoxed(stack);
  if (stack.size() != 1 || !stack[0].isTensor()) {
    throw std::runtime_error(name_ + " returned " + std::to_string(stack.size()) + " values; expected one Tensor");
  }
  return stack[0].toTensor();
}

}  // namespace crossdev::parity
