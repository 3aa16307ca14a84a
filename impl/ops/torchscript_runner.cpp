#include "ops/torchscript_runner.h"

#include <ATen/OpMathType.h>
#include <torch/csrc/jit/api/compilation_unit.h>
#include <torch/csrc/jit/codegen/fuser/interface.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/jit.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "ops/eligibility.h"

namespace crossdev::ops {
namespace {

std::mutex g_mutex;  // guards the cache and the process-wide JIT switches of the legacy mode

std::atomic<std::uint8_t>& executor_slot() {
  static std::atomic<std::uint8_t> slot = [] {
    const char* env = std::getenv("CROSSDEV_TORCHSCRIPT_EXECUTOR");
    const std::string value = env == nullptr ? "" : env;
    if (value.empty() || value == "profiling") return static_cast<std::uint8_t>(ScriptExecutor::Profiling);
    if (value == "legacy_fuser") return static_cast<std::uint8_t>(ScriptExecutor::LegacyFuser);
    throw std::invalid_argument("CROSSDEV_TORCHSCRIPT_EXECUTOR='" + value + "': expected profiling or legacy_fuser");
  }();
  return slot;
}

// Executors are created on a function's first run with the switches then in force, so each
// (op, executor) pair gets its own compilation unit.
std::shared_ptr<torch::jit::CompilationUnit> compiled(const OpDefinition& definition, ScriptExecutor executor) {
  static std::map<std::pair<std::string, ScriptExecutor>, std::shared_ptr<torch::jit::CompilationUnit>> cache;
  auto& unit = cache[{definition.name, executor}];
  if (!unit) unit = torch::jit::compile(definition.script.source);
  return unit;
}

// The PyTorch 1.x configuration: legacy executor, legacy fuser allowed on the CPU, no NNC.
class LegacyFuserSwitches {
 public:
  LegacyFuserSwitches()
      : executor_(torch::jit::getExecutorMode().exchange(false)),
        profiling_(torch::jit::getProfilingMode().exchange(false)),
        cpu_fusion_(torch::jit::canFuseOnCPU()),
        texpr_(torch::jit::tensorExprFuserEnabled()) {
    torch::jit::overrideCanFuseOnCPU(true);
    torch::jit::setTensorExprFuserEnabled(false);
  }
  ~LegacyFuserSwitches() {
    torch::jit::getExecutorMode() = executor_;
    torch::jit::getProfilingMode() = profiling_;
    torch::jit::overrideCanFuseOnCPU(cpu_fusion_);
    torch::jit::setTensorExprFuserEnabled(texpr_);
  }
  LegacyFuserSwitches(const LegacyFuserSwitches&) = delete;
  LegacyFuserSwitches& operator=(const LegacyFuserSwitches&) = delete;

 private:
  bool executor_, profiling_, cpu_fusion_, texpr_;
};

}  // namespace

const char* script_executor_name(ScriptExecutor executor) noexcept {
  return executor == ScriptExecutor::LegacyFuser ? "legacy_fuser" : "profiling";
}

void set_script_executor(ScriptExecutor executor) {
  executor_slot().store(static_cast<std::uint8_t>(executor), std::memory_order_relaxed);
}

ScriptExecutor script_executor() {
  return static_cast<ScriptExecutor>(executor_slot().load(std::memory_order_relaxed));
}

bool is_graph_fuser_error(std::string_view message) {
  static constexpr std::string_view kNeedle = "unknown device for graph fuser";
  auto it = std::search(message.begin(), message.end(), kNeedle.begin(), kNeedle.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == b;
  });
  return it != message.end();
}

at::Tensor run_torchscript(const OpDefinition& definition, const OpCall& call) {
  const at::ScalarType dtype = call_dtype(call);
  const at::ScalarType opmath = at::toOpMathType(dtype);
  OpCall promoted = call;
  for (auto& [name, t] : promoted.tensors) {
    if (t.defined() && t.is_floating_point()) t = t.to(opmath);
  }
  const std::string device = call_device(call).str();
  const ScriptExecutor executor = script_executor();
  try {
    std::unique_lock<std::mutex> lock(g_mutex);
    std::shared_ptr<torch::jit::CompilationUnit> unit = compiled(definition, executor);
    torch::jit::Function& function = unit->get_function(definition.script.function);
    std::vector<c10::IValue> arguments = definition.script.arguments(promoted);
    c10::IValue result;
    if (executor == ScriptExecutor::LegacyFuser) {
      LegacyFuserSwitches switches;  // process-wide, so held under the lock for the whole call
      result = function(std::move(arguments));
    } else {
      lock.unlock();
      result = function(std::move(arguments));
    }
    return result.toTensor().to(dtype);
  } catch (const std::exception& error) {
    if (is_graph_fuser_error(error.what())) throw GraphFuserUnavailable(definition.name, device, error.what());
    throw;
  }
}

}  // namespace crossdev::ops
