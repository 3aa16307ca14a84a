#include "sim/numerics.h"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>

#include <ATen/ATen.h>
#include <ATen/core/function_schema.h>

#include "sim/host_alias.h"

namespace crossdev::sim {
namespace {

struct MatmulOperands {
  std::string_view op;
  std::array<std::string_view, 2> args;  // the multiplied operands, by schema argument name
};
constexpr std::array<MatmulOperands, 10> kMatmulFamily = {{
    {"aten::mm", {"self", "mat2"}},
    {"aten::bmm", {"self", "mat2"}},
    {"aten::addmm", {"mat1", "mat2"}},
    {"aten::baddbmm", {"batch1", "batch2"}},
    {"aten::addbmm", {"batch1", "batch2"}},
    {"aten::mv", {"self", "vec"}},
    {"aten::addmv", {"mat", "vec"}},
    {"aten::dot", {"self", "tensor"}},
    {"aten::vdot", {"self", "other"}},
    {"aten::convolution_overrideable", {"input", "weight"}},
}};

std::uint32_t bits_of(float x) noexcept {
  std::uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
float float_of(std::uint32_t b) noexcept {
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

at::Tensor tf32_copy(const at::Tensor& t) {
  at::Tensor out = at::empty(t.sizes(), t.options().memory_format(at::MemoryFormat::Contiguous));
  at::Tensor host_out = host_alias(out);
  host_out.copy_(host_alias(t));
  float* data = host_out.data_ptr<float>();
  for (int64_t i = 0, n = host_out.numel(); i < n; ++i) data[i] = round_to_tf32(data[i]);
  return out;
}

template <typename T>
void flush_typed(at::Tensor& host) {
  const T min_normal = std::numeric_limits<T>::min();
  at::Tensor tiny = host.abs().lt(static_cast<double>(min_normal)).logical_and_(host.ne(0));
  if (tiny.any().item<bool>()) host.copy_(at::where(tiny, host.mul(0), host));
}

}  // namespace

float round_to_tf32(float x) noexcept {
  if (!std::isfinite(x)) return x;
  std::uint32_t b = bits_of(x);
  b += 0x0FFFu + ((b >> 13) & 1u);  // round to nearest, ties to even, on the 13 dropped bits
  b &= 0xFFFFE000u;
  return float_of(b);
}

bool round_matmul_operands(const c10::FunctionSchema& schema, torch::jit::Stack& stack) {
  const MatmulOperands* entry = nullptr;
  for (const auto& m : kMatmulFamily)
    if (schema.name() == m.op) entry = &m;
  if (entry == nullptr) return false;
  const auto& args = schema.arguments();
  const std::size_t base = stack.size() - args.size();
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].name() != entry->args[0] && args[i].name() != entry->args[1]) continue;
    c10::IValue& v = stack[base + i];
    if (!v.isTensor()) continue;
    const at::Tensor& t = v.toTensor();
    if (t.defined() && t.scalar_type() == at::kFloat && t.is_privateuseone()) v = tf32_copy(t);
  }
  return true;
}

void flush_subnormals_(const at::Tensor& t) {
  if (!t.defined() || !at::isFloatingType(t.scalar_type()) || t.numel() == 0) return;
  at::Tensor host = t.is_cpu() ? t : host_alias(t);
  switch (t.scalar_type()) {
    case at::kFloat: flush_typed<float>(host); break;
    case at::kDouble: flush_typed<double>(host); break;
    case at::kHalf: flush_typed<c10::Half>(host); break;
    case at::kBFloat16: flush_typed<c10::BFloat16>(host); break;
    default: break;  // float8 formats: no subnormal handling emulated
  }
}

void flush_subnormal_outputs(const c10::FunctionSchema& schema, torch::jit::Stack& stack) {
  const auto& returns = schema.returns();
  const std::size_t base = stack.size() - returns.size();
  for (std::size_t i = 0; i < returns.size(); ++i) {
    const auto* alias = returns[i].alias_info();
    if (alias != nullptr && !alias->isWrite()) continue;  // a view of an input: not computed here
    const c10::IValue& v = stack[base + i];
    if (v.isTensor() && v.toTensor().is_privateuseone()) flush_subnormals_(v.toTensor());
    else if (v.isTensorList())
      for (const at::Tensor& t : v.toTensorList())
        if (t.is_privateuseone()) flush_subnormals_(t);
  }
}

std::int64_t ulp_distance(float a, float b) noexcept {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<std::int64_t>::max();
  // Map the sign-magnitude bit patterns onto a monotonic integer line.
  auto ordered = [](float x) {
    const std::int64_t i = static_cast<std::int32_t>(bits_of(x));
    return i < 0 ? std::int64_t{INT32_MIN} - i : i;
  };
  const std::int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

}  // namespace crossdev::sim
