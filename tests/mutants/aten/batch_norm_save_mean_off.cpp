// Test-only ATen mutant: aten::native_batch_norm on the sim device (PrivateUse1) computes everything as the CPU
// does (its output and the running statistics it updates in place are right), but in training returns the
// saved mean (save_mean, what native_batch_norm_backward reads) off by 1e-2: a device whose batch statistics
// kernel hands the backward a stale or wrongly reduced mean. op_db xfails native_batch_norm's test_compare_cpu
// (save_mean/save_invstd in eval: the CPU returns (0,), CUDA (C,), pytorch/pytorch#85960); crossdev's open-outputs
// rule leaves exactly those uncompared, so it does not take the xfail and judges the case: training's save_mean
// is compared and native_batch_norm's forward must fail ("op_db's expectedFailure not taken where open outputs
// explain it", catalog.json), not come out as an xfail. Eval mode is the CPU's.
#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

constexpr double kSaveMeanOffset = 1e-2;

c10::optional<at::Tensor> cpu_copy(const c10::optional<at::Tensor>& t) {
  if (!t.has_value() || !t->defined()) return c10::optional<at::Tensor>();
  return t->to(at::kCPU, /*non_blocking=*/false, /*copy=*/true);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> batch_norm_save_mean_off(
    const at::Tensor& input, const c10::optional<at::Tensor>& weight, const c10::optional<at::Tensor>& bias,
    const c10::optional<at::Tensor>& running_mean, const c10::optional<at::Tensor>& running_var, bool training,
    double momentum, double eps) {
  const c10::optional<at::Tensor> mean_cpu = cpu_copy(running_mean);
  const c10::optional<at::Tensor> var_cpu = cpu_copy(running_var);
  auto [output, save_mean, save_invstd] = at::native_batch_norm(input.cpu(), cpu_copy(weight), cpu_copy(bias),
                                                                mean_cpu, var_cpu, training, momentum, eps);
  if (training) {
    if (mean_cpu.has_value()) running_mean->copy_(*mean_cpu);  // the CPU updated its copies in place
    if (var_cpu.has_value()) running_var->copy_(*var_cpu);
    save_mean = save_mean + kSaveMeanOffset;
  }
  const at::Device device = input.device();
  return {output.to(device), save_mean.to(device), save_invstd.to(device)};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("native_batch_norm", batch_norm_save_mean_off); }
