// CudaShapedStats: native_batch_norm's save_mean/save_invstd are outputs the contract leaves open. The
// CPU returns them empty, (0,), in eval; CUDA returns (C,): the running mean and rsqrt(running_var + eps),
// in the accumulate type of the input (float for half and bfloat16), and in training its statistics in
// that type too (aten/src/ATen/native/cuda/Normalization.cu, batch_norm_cuda and batch_norm_cuda_out).
// layer_norm's composite kernel on sim takes its mean/rstd from native_batch_norm, so its dtype then
// follows CUDA's layer_norm_cuda too (float for reduced precision inputs). The backward formulas read the
// running statistics in eval, so the gradients do not change; the CPU's backward kernels insist on their
// own forward's dtype, so the statistics go back to it on the way in (batch_norm_backward_stats,
// layer_norm_backward_stats).
#include <ATen/ATen.h>
#include <ATen/AccumulateType.h>

#include <initializer_list>

#include "sim/diverging_steps.h"
#include "sim/host_alias.h"

namespace crossdev::sim::steps {
namespace {

at::Tensor tensor_arg(const OpCall& call, std::string_view name) {
  const std::size_t i = call.index(name);
  if (i >= call.args.size() || !call.args[i].isTensor()) return at::Tensor();
  return call.args[i].toTensor();
}

// The dtype the CPU's forward kernel gives its statistics: the parameters' when they are of another
// dtype than the input (mixed type: float parameters with a reduced precision input), else the input's.
c10::ScalarType cpu_stats_dtype(const OpCall& call, std::initializer_list<std::string_view> parameters) {
  const at::Tensor input = tensor_arg(call, "input");
  for (std::string_view name : parameters) {
    const at::Tensor p = tensor_arg(call, name);
    if (p.defined()) return p.scalar_type();
  }
  return input.scalar_type();
}

void cast_args_to(const OpCall& call, torch::jit::Stack& stack, std::size_t base, c10::ScalarType dtype,
                  std::initializer_list<std::string_view> names) {
  for (std::string_view name : names) {
    const at::Tensor t = tensor_arg(call, name);
    if (t.defined() && t.numel() > 0 && t.is_privateuseone() && t.scalar_type() != dtype)
      stack[base + call.index(name)] = sim_copy_of(host_alias(t).to(dtype), t);
  }
}

}  // namespace

at::Tensor sim_copy_of(const at::Tensor& host, const at::Tensor& like_device) {
  at::Tensor out = at::empty(host.sizes(), host.options().device(like_device.device()));
  if (out.numel() > 0) host_alias(out).copy_(host);
  return out;
}

void batch_norm_stats(const OpCall& call, const SimConfig&, torch::jit::Stack& stack, std::size_t base) {
  const at::Tensor input = tensor_arg(call, "input");
  if (!input.defined() || input.dim() < 2 || !input.is_privateuseone()) return;
  const c10::ScalarType acc = at::toAccumulateType(input.scalar_type(), c10::DeviceType::CUDA);
  const at::Tensor running_mean = tensor_arg(call, "running_mean");
  const at::Tensor running_var = tensor_arg(call, "running_var");
  if (!call.arg("training").toBool() && running_mean.defined() && running_var.defined()) {
    const double eps = call.arg("eps").toDouble();
    stack[base + 1] = sim_copy_of(host_alias(running_mean).to(acc), input);
    stack[base + 2] = sim_copy_of(host_alias(running_var).to(acc).add(eps).rsqrt(), input);
    return;
  }
  for (std::size_t i : {std::size_t{1}, std::size_t{2}}) {
    const at::Tensor t = stack[base + i].toTensor();
    if (t.defined() && t.numel() > 0 && t.scalar_type() != acc) stack[base + i] = sim_copy_of(host_alias(t).to(acc), input);
  }
}

void batch_norm_backward_stats(const OpCall& call, const SimConfig&, torch::jit::Stack& stack, std::size_t base) {
  const c10::ScalarType dtype = cpu_stats_dtype(call, {"weight", "running_mean", "running_var"});
  cast_args_to(call, stack, base, dtype, {"save_mean", "save_invstd"});
}

void layer_norm_backward_stats(const OpCall& call, const SimConfig&, torch::jit::Stack& stack, std::size_t base) {
  const c10::ScalarType dtype = cpu_stats_dtype(call, {"weight", "bias"});
  cast_args_to(call, stack, base, dtype, {"mean", "rstd"});
}

}  // namespace crossdev::sim::steps
