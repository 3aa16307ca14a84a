#include "sim/native_kernels.h"

#include <ATen/EmptyTensor.h>
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_local_scalar_dense_native.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/copy_native.h>
#include <ATen/ops/resize_native.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/DeviceGuard.h>

#include "sim/divergence_switch.h"
#include "sim/host_alias.h"
#include "sim/numerics.h"
#include "sim/profile_checks.h"
#include "sim/sim_allocator.h"
#include "sim/sim_config.h"

namespace crossdev::sim {
namespace {

constexpr c10::DispatchKeySet kSimKeys(c10::DispatchKey::PrivateUse1);

// Convolution's operands in TF32: numerics emulation asks for it, or the divergence switch with the kind's
// TF32 flag for convolution set (cuda: torch.backends.cudnn.allow_tf32, on by default in PyTorch).
bool convolution_in_tf32(const SimConfig& config) {
  return config.numerics.tf32_matmul || (config.diverge && tf32_for_convolution(config.profile));
}
// `t` (float32, on the host) replaced by a TF32-rounded copy; other dtypes are left as they are.
void round_host_to_tf32(at::Tensor& t) {
  if (t.scalar_type() != at::kFloat) return;
  t = t.clone(at::MemoryFormat::Contiguous);
  float* d = t.data_ptr<float>();
  for (int64_t i = 0, n = t.numel(); i < n; ++i) d[i] = round_to_tf32(d[i]);
}

// Shared preconditions of every allocation: the profile's dtype and inference-mode rules.
void check_allocation(c10::ScalarType dtype, std::optional<c10::Layout> layout, std::optional<bool> pin_memory) {
  const EmulationProfile& p = current_profile();
  check_dtype_supported(p, dtype);
  check_inference_mode(p);
  TORCH_CHECK(c10::layout_or_default(layout) == c10::Layout::Strided, "sim: only strided tensors are supported");
  TORCH_CHECK(!c10::pinned_memory_or_default(pin_memory), "Pin memory can only be on CPU");
}

at::Tensor empty_memory_format(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                               std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                               std::optional<bool> pin_memory, std::optional<c10::MemoryFormat> memory_format) {
  const auto scalar_type = c10::dtype_or_default(dtype);
  check_allocation(scalar_type, layout, pin_memory);
  const c10::DeviceGuard guard(c10::device_or_default(device));
  return at::detail::empty_generic(size, &SimAllocator::instance(), kSimKeys, scalar_type, memory_format);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<c10::ScalarType> dtype,
                         std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                         std::optional<bool> pin_memory) {
  const auto scalar_type = c10::dtype_or_default(dtype);
  check_allocation(scalar_type, layout, pin_memory);
  const c10::DeviceGuard guard(c10::device_or_default(device));
  return at::detail::empty_strided_generic(size, stride, &SimAllocator::instance(), kSimKeys, scalar_type);
}

at::Tensor as_strided(const at::Tensor& self, c10::IntArrayRef size, c10::IntArrayRef stride,
                      std::optional<int64_t> storage_offset) {
  return at::native::as_strided_tensorimpl(self, size, stride, storage_offset);
}

const at::Tensor& resize_(const at::Tensor& self, c10::IntArrayRef size, std::optional<at::MemoryFormat> format) {
  check_inference_mode(current_profile());
  const c10::DeviceGuard guard(self.device());
  return at::native::resize_(self, size, format);  // reallocates through the storage's (sim) allocator
}

at::Tensor reshape_alias(const at::Tensor& self, c10::IntArrayRef size, c10::IntArrayRef stride) {
  return at::native::_reshape_alias(self, size, stride);
}

at::Tensor view(const at::Tensor& self, c10::IntArrayRef size) { return at::native::view(self, size); }

// Every copy that touches the sim device: sim<->sim, cpu->sim, sim->cpu. Dtype conversion and
// strides are handled by the CPU copy kernel working on host aliases of the sim memory.
at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  TORCH_CHECK(self.defined() && dst.defined(), "sim: _copy_from needs defined source and destination");
  check_inference_mode(current_profile());
  if (dst.numel() == 0) return dst;
  at::Tensor dst_host = dst.is_privateuseone() ? host_alias(dst) : dst;
  const at::Tensor src_host = self.is_privateuseone() ? host_alias(self) : self;
  at::native::copy_(dst_host, src_host, non_blocking);
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  if (dst.is_privateuseone()) resize_(dst, self.sizes(), std::nullopt);
  else dst.resize_(self.sizes());
  return copy_from(self, dst, false);
}

at::Scalar local_scalar_dense(const at::Tensor& self) {
  return at::native::_local_scalar_dense_cpu(host_alias(self));
}

at::Tensor& set_source_tensor(at::Tensor& self, const at::Tensor& source) {
  return at::native::set_tensor_(self, source);
}
at::Tensor& set_source_storage(at::Tensor& self, at::Storage source) { return at::native::set_(self, source); }
at::Tensor& set_source_storage_offset(at::Tensor& self, at::Storage source, int64_t offset, c10::IntArrayRef size,
                                      c10::IntArrayRef stride) {
  return at::native::set_storage_cpu_(self, source, offset, size, stride);
}

// Convolution on a backend other than CPU/CUDA/MKLDNN dispatches to convolution_overrideable;
// run it on host aliases through the CPU implementation.
at::Tensor convolution_overrideable(const at::Tensor& input, const at::Tensor& weight,
                                    const std::optional<at::Tensor>& bias, c10::IntArrayRef stride,
                                    c10::IntArrayRef padding, c10::IntArrayRef dilation, bool transposed,
                                    c10::IntArrayRef output_padding, int64_t groups) {
  const EmulationProfile& p = current_profile();
  check_inference_mode(p);
  const auto config = current_config();
  auto to_host = [](const at::Tensor& t) { return t.is_privateuseone() ? host_alias(t).clone() : t; };
  at::Tensor in = to_host(input);
  at::Tensor w = to_host(weight);
  if (convolution_in_tf32(*config)) {
    for (at::Tensor* t : {&in, &w}) round_host_to_tf32(*t);
  }
  std::optional<at::Tensor> b;
  if (bias.has_value() && bias->defined()) b = to_host(*bias);
  at::Tensor out_host =
      at::convolution(in, w, b, stride, padding, dilation, transposed, output_padding, groups);
  at::Tensor out = out_host.to(input.device());
  if (config->numerics.flush_subnormals) flush_subnormals_(out);
  return out;
}

// Its autograd: convolution_backward_overrideable has no CPU kernel to delegate to, so it runs
// at::convolution_backward (the CPU's) on host copies and returns the gradients on the input's device.
std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward_overrideable(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight, c10::IntArrayRef stride,
    c10::IntArrayRef padding, c10::IntArrayRef dilation, bool transposed, c10::IntArrayRef output_padding,
    int64_t groups, std::array<bool, 3> output_mask) {
  check_inference_mode(current_profile());
  auto to_host = [](const at::Tensor& t) { return t.is_privateuseone() ? host_alias(t).clone() : t; };
  at::Tensor grad_host = to_host(grad_output);
  at::Tensor input_host = to_host(input);
  at::Tensor weight_host = to_host(weight);
  // cuDNN's backward convolutions take TF32 operands under the same flag as its forward (the divergence
  // switch only: numerics emulation's TF32 has always rounded the forward alone).
  if (current_config()->diverge && tf32_for_convolution(current_config()->profile))
    for (at::Tensor* t : {&grad_host, &input_host, &weight_host}) round_host_to_tf32(*t);
  const int64_t channels = transposed ? weight.size(1) * groups : weight.size(0);
  const std::vector<int64_t> bias_sizes{channels};
  auto [gi, gw, gb] = at::convolution_backward(grad_host, input_host, weight_host, bias_sizes,
                                               stride, padding, dilation, transposed, output_padding, groups,
                                               output_mask);
  auto back = [&](const at::Tensor& t) { return t.defined() ? t.to(input.device()) : t; };
  return {back(gi), back(gw), back(gb)};
}

}  // namespace

void register_native_kernels(torch::Library& m) {
  m.impl("empty.memory_format", &empty_memory_format);
  m.impl("empty_strided", &empty_strided);
  m.impl("as_strided", &as_strided);
  m.impl("resize_", &resize_);
  m.impl("_reshape_alias", &reshape_alias);
  m.impl("view", &view);
  m.impl("_copy_from", &copy_from);
  m.impl("_copy_from_and_resize", &copy_from_and_resize);
  m.impl("_local_scalar_dense", &local_scalar_dense);
  m.impl("set_.source_Tensor", &set_source_tensor);
  m.impl("set_.source_Storage", &set_source_storage);
  m.impl("set_.source_Storage_storage_offset", &set_source_storage_offset);
  m.impl("convolution_overrideable", &convolution_overrideable);
  m.impl("convolution_backward_overrideable", &convolution_backward_overrideable);
}

}  // namespace crossdev::sim
