#include "ops/op_spec.h"

#include <deque>
#include <memory>
#include <mutex>

#include "ops/op_definition.h"

namespace crossdev::ops {
namespace {

struct ImplRow {
  Impl impl;
  const char* name;
};
constexpr ImplRow kImpls[] = {
    {Impl::Fused, "fused"},
    {Impl::Fallback, "fallback"},
    {Impl::TorchScript, "torchscript"},
};

std::string describe_failures(const std::string& op, Impl impl, const std::vector<PredicateResult>& failed) {
  std::string text = op + ": implementation '" + impl_name(impl) + "' is not eligible:";
  for (const PredicateResult& r : failed) text += " [" + r.predicate + "] " + r.explanation + ";";
  return text;
}

}  // namespace

const char* impl_name(Impl impl) noexcept {
  for (const ImplRow& row : kImpls) {
    if (row.impl == impl) return row.name;
  }
  return "unknown";
}

std::optional<Impl> impl_from_name(std::string_view name) noexcept {
  for (const ImplRow& row : kImpls) {
    if (name == row.name) return row.impl;
  }
  return std::nullopt;
}

const std::vector<Impl>& all_impls() {
  static const std::vector<Impl> impls = {Impl::Fused, Impl::Fallback, Impl::TorchScript};
  return impls;
}

const at::Tensor& OpCall::tensor(std::string_view name) const {
  static const at::Tensor undefined;
  const at::Tensor* t = tensors.get(name);
  return t == nullptr ? undefined : *t;
}

bool OpCall::has_tensor(std::string_view name) const {
  const at::Tensor* t = tensors.get(name);
  return t != nullptr && t->defined();
}

double OpCall::scalar(std::string_view name, double when_absent) const {
  const double* v = scalars.get(name);
  return v == nullptr ? when_absent : *v;
}

std::optional<double> OpCall::maybe_scalar(std::string_view name) const {
  const double* v = scalars.get(name);
  if (v == nullptr) return std::nullopt;
  return *v;
}

NotEligible::NotEligible(std::string op, Impl impl, std::vector<PredicateResult> failed)
    : c10::ValueError({__func__, __FILE__, static_cast<std::uint32_t>(__LINE__)}, describe_failures(op, impl, failed)),
      op_(std::move(op)),
      impl_(impl),
      failed_(std::move(failed)) {}

GraphFuserUnavailable::GraphFuserUnavailable(std::string op, std::string device, const std::string& original)
    // First line of the JIT's message only: c10::Error appends a C++ backtrace.
    : std::runtime_error(op + ": torchscript on " + device + ": " + original.substr(0, original.find('\n'))),
      op_(std::move(op)),
      device_(std::move(device)) {}

std::vector<PredicateResult> OpSpec::failed_predicates(Impl impl, const OpCall& call) const {
  std::vector<PredicateResult> failed;
  for (PredicateResult& r : eligibility(impl, call)) {
    if (!r.ok) failed.push_back(std::move(r));
  }
  return failed;
}

const std::vector<const OpSpec*>& all_ops() {
  // One OpSpec per registered definition, in registration order (ops register themselves:
  // library/register_op.h). A library loaded later (--load-library) registers more; they are
  // wrapped on the next call, and earlier rows keep their addresses. Libraries are loaded before
  // a run starts, never while another thread iterates.
  static std::mutex mutex;
  static std::deque<std::unique_ptr<OpSpec>> owned;
  static std::vector<const OpSpec*> view;
  std::lock_guard<std::mutex> lock(mutex);
  const std::vector<const OpDefinition*>& definitions = all_definitions();
  while (view.size() < definitions.size()) {
    owned.push_back(make_table_op(*definitions[view.size()]));
    view.push_back(owned.back().get());
  }
  return view;
}

const OpSpec* find_op(std::string_view name) {
  for (const OpSpec* op : all_ops()) {
    if (name == op->name()) return op;
  }
  return nullptr;
}

std::vector<at::ScalarType> dtypes_for_device(c10::Device device) {
  std::vector<at::ScalarType> dtypes = {at::kFloat, at::kHalf, at::kBFloat16};
  if (device.type() != c10::DeviceType::MPS) dtypes.push_back(at::kDouble);  // MPS has no float64
  return dtypes;
}

}  // namespace crossdev::ops
