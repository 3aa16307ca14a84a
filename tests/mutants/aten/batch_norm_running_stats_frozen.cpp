// Test-only ATen mutant: aten::native_batch_norm on the sim device (PrivateUse1) returns the CPU's output,
// save_mean and save_invstd, but in training never updates running_mean and running_var (they keep the values
// they had): a device kernel that forgets the in-place momentum update, which no returned value shows. The
// suite must fail native_batch_norm's forward by "inputs updated in place are compared" (catalog.json; samples.py
// compares every tensor of the sample after the call). Eval mode is the CPU's.
#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

c10::optional<at::Tensor> cpu_copy(const c10::optional<at::Tensor>& t) {
  if (!t.has_value() || !t->defined()) return c10::optional<at::Tensor>();
  return t->to(at::kCPU, /*non_blocking=*/false, /*copy=*/true);  // a copy, even of a CPU tensor: never written back
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> batch_norm_running_stats_frozen(
    const at::Tensor& input, const c10::optional<at::Tensor>& weight, const c10::optional<at::Tensor>& bias,
    const c10::optional<at::Tensor>& running_mean, const c10::optional<at::Tensor>& running_var, bool training,
    double momentum, double eps) {
  // The CPU updates its copies of the running statistics; the device's stay as they were.
  auto [output, save_mean, save_invstd] = at::native_batch_norm(input.cpu(), cpu_copy(weight), cpu_copy(bias),
                                                                cpu_copy(running_mean), cpu_copy(running_var),
                                                                training, momentum, eps);
  const at::Device device = input.device();
  return {output.to(device), save_mean.to(device), save_invstd.to(device)};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("native_batch_norm", batch_norm_running_stats_frozen); }
