// Activation: a torch::Library fragment that registers the active mutant's kernel for
// crossdev::<op> under the CPU key. The dispatcher keeps the production kernel underneath; when
// the fragment is destroyed, its registration is removed and the production kernel is back.
#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <stdexcept>

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/util/StringUtil.h>
#include <torch/library.h>

#include "mutant_kernels.h"
#include "mutants.h"
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros_like.h>

#include "ops/library/call_marshal.h"
#include "ops/op_definition.h"

namespace crossdev::mutants {
namespace {

std::mutex g_mutex;
std::unique_ptr<torch::Library> g_override;  // the active mutant's registration
std::atomic<const MutantRow*> g_active{nullptr};

const MutantRow* find_row(const std::string& name) {
  for (const MutantRow& row : mutant_rows()) {
    if (name == row.name) return &row;
  }
  return nullptr;
}

// The boxed CPU kernel every mutant is registered as; it runs the active row's kernel.
void mutant_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const std::size_t n = op.schema().arguments().size();
  const ops::OpCall call = ops::library::call_from_arguments(op.schema(), torch::jit::last(*stack, n));
  torch::jit::drop(*stack, n);
  const MutantRow* row = g_active.load();
  TORCH_CHECK(row != nullptr, "crossdev_mutants: a mutant kernel ran with no mutant active");
  stack->emplace_back(row->kernel(call).contiguous());
}

// The boxed CPU kernel of crossdev::<op>_backward for a backward mutant: (grad_out, the op's
// arguments) in, one gradient per differentiable input out (empty where the input is absent).
void mutant_backward_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::FunctionSchema& schema = op.schema();
  const std::size_t n = schema.arguments().size();
  const auto arguments = torch::jit::last(*stack, n);
  const at::Tensor grad_out = arguments[0].toTensor();
  const ops::OpCall call = ops::library::call_from_arguments(schema, arguments.slice(1), /*first=*/1);
  torch::jit::drop(*stack, n);
  const MutantRow* row = g_active.load();
  TORCH_CHECK(row != nullptr && row->backward != nullptr, "crossdev_mutants: a backward mutant ran with none active");
  const std::string name(row->name, std::string_view(row->name).find('.'));
  const ops::OpDefinition* def = ops::find_definition(name);
  TORCH_CHECK(def != nullptr, "crossdev_mutants: unknown op ", name);
  const std::vector<at::Tensor> grads = row->backward(call, grad_out);
  for (std::size_t i = 0; i < def->inputs.size(); ++i) {
    if (!def->inputs[i].differentiable) continue;
    const at::Tensor input = call.tensor(def->inputs[i].name);
    if (!input.defined()) {
      stack->emplace_back(at::empty({0}, grad_out.options()));
    } else if (i < grads.size() && grads[i].defined()) {
      stack->emplace_back(grads[i].contiguous());
    } else {
      stack->emplace_back(at::zeros_like(input, at::MemoryFormat::Contiguous));
    }
  }
}

}  // namespace

const std::vector<MutantInfo>& mutant_table() {
  static const std::vector<MutantInfo> table = [] {
    std::vector<MutantInfo> out;
    for (const MutantRow& row : mutant_rows()) out.push_back({row.name, row.description, row.backward != nullptr});
    return out;
  }();
  return table;
}

std::vector<std::string> mutant_names() {
  std::vector<std::string> names;
  for (const MutantRow& row : mutant_rows()) names.emplace_back(row.name);
  return names;
}

void set_active_mutant(const std::string& name) {
  std::lock_guard<std::mutex> lock(g_mutex);
  const MutantRow* row = name.empty() ? nullptr : find_row(name);
  if (!name.empty() && row == nullptr) {
    throw std::invalid_argument("unknown mutant '" + name + "'; expected one of: " + c10::Join(", ", mutant_names()));
  }
  g_override.reset();
  g_active.store(row);
  if (row == nullptr) return;
  const std::string op(row->name, std::string_view(row->name).find('.'));
  g_override = std::make_unique<torch::Library>(torch::Library::IMPL, "crossdev", c10::DispatchKey::CPU, __FILE__, __LINE__);
  if (row->backward != nullptr) {
    g_override->impl((op + "_backward").c_str(), torch::CppFunction::makeFromBoxedFunction<&mutant_backward_kernel>());
  } else {
    g_override->impl(op.c_str(), torch::CppFunction::makeFromBoxedFunction<&mutant_kernel>());
  }
}

std::string active_mutant() {
  const MutantRow* row = g_active.load();
  return row == nullptr ? "" : row->name;
}

}  // namespace crossdev::mutants

TORCH_LIBRARY(crossdev_mutants, m) {
  m.def("set_active(str name) -> ()", [](std::string name) { crossdev::mutants::set_active_mutant(name); });
  m.def("active() -> str", [] { return crossdev::mutants::active_mutant(); });
  m.def("names() -> str[]", [] { return crossdev::mutants::mutant_names(); });
}

namespace {
// CROSSDEV_MUTANT=<name> activates a mutant as soon as the library is loaded.
const bool g_from_env = [] {
  if (const char* name = std::getenv("CROSSDEV_MUTANT"); name != nullptr && *name != '\0') {
    crossdev::mutants::set_active_mutant(name);
  }
  return true;
}();
}  // namespace
