#include "parity/ops_repro_sample.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <numeric>

#include "util/dtype_names.h"
#include "util/json.h"

namespace crossdev::parity {
namespace {

void write_sizes(json::Writer& w, c10::IntArrayRef sizes) {
  w.begin_array();
  for (std::int64_t s : sizes) w.value(static_cast<long long>(s));
  w.end_array();
}

// The tensor's bytes in the layout the header describes; returns the byte count.
std::size_t write_tensor(json::Writer& w, const at::Tensor& t) {
  at::Tensor view = t.detach().cpu();
  std::vector<std::int64_t> expand;
  for (std::int64_t d = 0; d < view.dim(); ++d) {
    if (view.stride(d) == 0 && view.size(d) > 1) {
      expand = t.sizes().vec();
      view = view.narrow(d, 0, 1);
    }
  }
  std::vector<std::int64_t> order(view.dim());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return view.stride(a) > view.stride(b); });
  const bool permuted = !std::is_sorted(order.begin(), order.end());
  const at::Tensor base = (permuted ? view.permute(order) : view).contiguous();
  w.begin_object();
  w.field("dtype", dtype_name(base.scalar_type()));
  w.key("shape");
  write_sizes(w, base.sizes());
  const std::size_t bytes = base.numel() * base.element_size();
  w.field("data", base64(base.data_ptr(), bytes));
  if (permuted) {
    std::vector<std::int64_t> back(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) back[order[i]] = static_cast<std::int64_t>(i);
    w.key("permute");
    write_sizes(w, back);
  }
  if (!expand.empty()) {
    w.key("expand");
    write_sizes(w, expand);
  }
  w.end_object();
  return bytes;
}

void write_tolerance(json::Writer& w, const char* key, const Tolerance& t) {
  w.key(key).begin_object().field("rtol", t.rtol).field("atol", t.atol).end_object();
}

}  // namespace

std::string base64(const void* data, std::size_t size) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto* p = static_cast<const unsigned char*>(data);
  std::string out;
  out.reserve((size + 2) / 3 * 4);
  for (std::size_t i = 0; i < size; i += 3) {
    const std::uint32_t n = (std::uint32_t{p[i]} << 16) | (i + 1 < size ? std::uint32_t{p[i + 1]} << 8 : 0) |
                            (i + 2 < size ? std::uint32_t{p[i + 2]} : 0);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < size ? kAlphabet[(n >> 6) & 63] : '=';
    out += i + 2 < size ? kAlphabet[n & 63] : '=';
  }
  return out;
}

OpsReproRecord ops_repro_record(const OpsReproInputs& in) {
  const ops::OpCall& call = *in.call;
  if (in.impl == ops::impl_name(ops::Impl::TorchScript))
    return {"", "a TorchScript case: its script is compiled inside crossdev's library, so no torch-only script "
                "calls it (the fused and fallback cases of the same inputs have scripts)"};
  if (call.generator.has_value() && dropout_probability(call) > 0.0)
    return {"", "a random call (training with p > 0): judged by the law of its draws, not by one sample's values"};
  json::Writer w(0);
  w.begin_object();
  w.field("schema", "crossdev.ops_repro_sample").field("kind", in.raised ? "raised" : "mismatch");
  w.field("op", in.op).field("impl", in.impl).field("dtype", dtype_name(in.dtype)).field("device_kind", in.device_kind);
  w.key("checks").begin_array();
  if (in.config->forward) w.value("forward");
  if (in.config->backward) w.value("backward");
  w.end_array();
  w.key("comparisons").begin_array();
  for (const std::string& c : in.comparisons) w.value(c);
  w.end_array();
  write_tolerance(w, "tolerance", in.config->output_tolerance);
  write_tolerance(w, "grad_tolerance", in.config->grad_tolerance);
  w.key("grad_inputs").begin_array();
  for (const std::string& name : in.grad_inputs) w.value(name);
  w.end_array();
  w.key("scalars").begin_object();
  for (const auto& [name, value] : call.scalars) w.field(name, value);
  w.end_object();
  w.field("training", call.training);
  std::size_t bytes = 0;
  w.key("tensors").begin_object();
  for (const auto& [name, t] : call.tensors) {
    if (!t.defined()) continue;
    w.key(name);
    bytes += write_tensor(w, t);
  }
  w.end_object();
  w.key("grad_out");
  if (in.grad_out.defined()) {
    bytes += write_tensor(w, in.grad_out);
  } else {
    w.null();
  }
  w.end_object();
  if (bytes > kOpsReproInlineBytes)
    return {"", "its inputs are " + std::to_string(bytes) + " bytes, more than the " +
                    std::to_string(kOpsReproInlineBytes) + " a bundle records inline; the same defect on a smaller "
                    "shape set (basic, odd_tail) has a script"};
  return {w.str(), ""};
}

}  // namespace crossdev::parity
