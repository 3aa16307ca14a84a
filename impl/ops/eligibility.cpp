#include "ops/eligibility.h"

#include <algorithm>
#include <sstream>
#include <string_view>
#include <utility>

namespace crossdev::ops {

const char* check_error_name(CheckError error) noexcept {
  switch (error) {
    case CheckError::Value:
      return "ValueError";
    case CheckError::Type:
      return "TypeError";
    case CheckError::Index:
      return "IndexError";
    case CheckError::Runtime:
      return "RuntimeError";
  }
  return "RuntimeError";
}

std::string sizes_text(const at::Tensor& t) {
  if (!t.defined()) return "<undefined>";
  std::ostringstream os;
  os << t.sym_sizes();
  return os.str();
}

bool sym_holds(const c10::SymBool& condition) { return condition.expect_true(__FILE__, __LINE__); }

// Concrete sizes (every call outside torch.compile's symbolic tracing) are compared as integers:
// the SymInt / SymBool operations below are out-of-line calls, several per dimension, on every
// call of every op (the validity predicates run on each kernel call).
bool sym_equal(const c10::SymInt& a, const c10::SymInt& b) {
  if (!a.is_heap_allocated() && !b.is_heap_allocated()) return a.as_int_unchecked() == b.as_int_unchecked();
  return sym_holds(a.sym_eq(b));
}

bool sym_one_or_equal(const c10::SymInt& a, const c10::SymInt& b) {
  if (!a.is_heap_allocated() && !b.is_heap_allocated()) {
    return a.as_int_unchecked() == 1 || a.as_int_unchecked() == b.as_int_unchecked();
  }
  return sym_holds(a.sym_eq(1).sym_or(a.sym_eq(b)));
}

bool broadcastable(c10::SymIntArrayRef a, c10::SymIntArrayRef b) {
  for (std::size_t i = 1; i <= std::min(a.size(), b.size()); ++i) {
    const c10::SymInt& x = a[a.size() - i];
    const c10::SymInt& y = b[b.size() - i];
    if (!x.is_heap_allocated() && !y.is_heap_allocated()) {
      const std::int64_t xv = x.as_int_unchecked(), yv = y.as_int_unchecked();
      if (xv != yv && xv != 1 && yv != 1) return false;
      continue;
    }
    if (!sym_holds(x.sym_eq(y).sym_or(x.sym_eq(1)).sym_or(y.sym_eq(1)))) return false;
  }
  return true;
}

bool broadcastable(at::IntArrayRef a, at::IntArrayRef b) {
  for (std::size_t i = 1; i <= std::min(a.size(), b.size()); ++i) {
    const std::int64_t x = a[a.size() - i], y = b[b.size() - i];
    if (x != y && x != 1 && y != 1) return false;
  }
  return true;
}

bool broadcasts_to(c10::SymIntArrayRef b, c10::SymIntArrayRef a) {
  if (b.size() > a.size()) return false;
  for (std::size_t i = 1; i <= b.size(); ++i) {
    const c10::SymInt& y = b[b.size() - i];
    const c10::SymInt& x = a[a.size() - i];
    if (!y.is_heap_allocated() && !x.is_heap_allocated()) {
      if (y.as_int_unchecked() != 1 && y.as_int_unchecked() != x.as_int_unchecked()) return false;
      continue;
    }
    if (!sym_holds(y.sym_eq(1).sym_or(y.sym_eq(x)))) return false;
  }
  return true;
}

bool broadcasts_to(at::IntArrayRef b, at::IntArrayRef a) {
  if (b.size() > a.size()) return false;
  for (std::size_t i = 1; i <= b.size(); ++i) {
    const std::int64_t y = b[b.size() - i];
    if (y != 1 && y != a[a.size() - i]) return false;
  }
  return true;
}

bool broadcasts_to_broadcast_of(at::IntArrayRef t, at::IntArrayRef a, at::IntArrayRef b) {
  if (t.size() > std::max(a.size(), b.size())) return false;
  for (std::size_t i = 1; i <= t.size(); ++i) {
    const std::int64_t y = t[t.size() - i];
    if (y == 1) continue;
    const std::int64_t x = i <= a.size() ? a[a.size() - i] : 1;
    const std::int64_t z = i <= b.size() ? b[b.size() - i] : 1;
    if (y != (x == 1 ? z : x)) return false;  // the broadcast dim: x unless x is 1
  }
  return true;
}

bool has_symbolic_sizes(const at::Tensor& t) {
  return t.defined() && t.unsafeGetTensorImpl()->has_symbolic_sizes_strides();
}

c10::Device call_device(const OpCall& call) {
  for (const auto& [name, t] : call.tensors) {
    if (t.defined()) return t.device();
  }
  return c10::Device(c10::kCPU);
}

at::ScalarType call_dtype(const OpCall& call) {
  for (const auto& [name, t] : call.tensors) {
    if (t.defined() && t.is_floating_point()) return t.scalar_type();
  }
  return at::kFloat;
}

namespace {
// The inputs' names as string_views (InputSpec::name points at a literal), so a predicate that runs
// on every kernel call does not measure a C string per input per call.
std::vector<std::pair<std::string_view, InputSpec>> named_inputs(const std::vector<InputSpec>& inputs) {
  std::vector<std::pair<std::string_view, InputSpec>> named;
  for (const InputSpec& in : inputs) named.emplace_back(in.name, in);
  return named;
}
}  // namespace

Predicate required_inputs_present(const std::vector<InputSpec>& inputs) {
  return {"required_inputs_present",
          [named = named_inputs(inputs)](const OpCall& call) -> std::string {
            std::size_t known = 0;  // the call's entries that are inputs
            for (const auto& [name, in] : named) {
              const at::Tensor* t = call.tensors.get(name);
              known += t != nullptr ? 1 : 0;
              if (in.required && (t == nullptr || !t->defined())) {
                return std::string("input '") + in.name + "' is required but missing";
              }
            }
            if (known == call.tensors.size()) return "";
            for (const auto& [name, t] : call.tensors) {
              bool is_input = false;
              for (const auto& entry : named) is_input = is_input || name == entry.first;
              if (!is_input && t.defined()) return "unknown input '" + name + "'";
            }
            return "";
          },
          CheckError::Type};
}

Predicate input_dtypes_consistent(const std::vector<InputSpec>& inputs) {
  return {"input_dtypes_consistent",
          [named = named_inputs(inputs)](const OpCall& call) -> std::string {
            const char* first_name = nullptr;
            at::ScalarType first = at::ScalarType::Undefined;
            for (const auto& [name, in] : named) {
              const at::Tensor& t = call.tensor(name);
              if (!t.defined()) continue;
              if (in.kind == InputKind::Mask) {
                if (t.scalar_type() != at::kBool) {
                  return std::string("input '") + in.name + "' must be bool, got " + c10::toString(t.scalar_type());
                }
                continue;
              }
              if (!t.is_floating_point()) {
                return std::string("input '") + in.name + "' must be floating point, got " +
                       c10::toString(t.scalar_type());
              }
              if (first == at::ScalarType::Undefined) {
                first = t.scalar_type();
                first_name = in.name;
              } else if (t.scalar_type() != first) {
                return std::string("input '") + in.name + "' is " + c10::toString(t.scalar_type()) + " but '" +
                       first_name + "' is " + c10::toString(first);
              }
            }
            return "";
          },
          CheckError::Type};
}

Predicate inputs_on_one_device() {
  return {"inputs_on_one_device",
          [](const OpCall& call) -> std::string {
            const c10::Device device = call_device(call);
            bool mixed = false;
            for (const auto& [name, t] : call.tensors) mixed = mixed || (t.defined() && t.device() != device);
            if (!mixed) return "";
            std::string listing;
            for (const auto& [name, t] : call.tensors) {
              if (t.defined()) listing += (listing.empty() ? "" : ", ") + name + " on " + t.device().str();
            }
            return "inputs are on more than one device: " + listing;
          },
          CheckError::Runtime};  // as ATen's "Expected all tensors to be on the same device"
}

Predicate device_has_fused_kernel(bool has_cuda_kernel) {
  return {"device_has_fused_kernel",
          [has_cuda_kernel](const OpCall& call) -> std::string {
            const c10::Device device = call_device(call);
            if (device.is_cpu() || (device.is_cuda() && has_cuda_kernel)) return "";
            return "device " + device.str() + ": no fused kernel (fused kernels built for: cpu" +
                   (has_cuda_kernel ? ", cuda" : "") + ")";
          },
          CheckError::Runtime};
}

Predicate fused_dtype_supported() {
  return {"fused_dtype_supported",
          [](const OpCall& call) -> std::string {
            const at::ScalarType dtype = call_dtype(call);
            switch (dtype) {
              case at::kFloat:
              case at::kDouble:
              case at::kHalf:
              case at::kBFloat16:
                return "";
              default:
                return std::string("dtype ") + c10::toString(dtype) +
                       ": fused kernels exist for float32, float64, float16, bfloat16";
            }
          },
          CheckError::Type};
}

bool evaluate(const Predicate& predicate, const OpCall& call, std::vector<PredicateResult>& out) {
  std::string why = predicate.check(call);
  const bool ok = why.empty();
  out.push_back({predicate.name, ok, ok ? "ok" : std::move(why)});
  return ok;
}

}  // namespace crossdev::ops
