#include "parity/comparator.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include <ATen/ATen.h>

#include "parity/ulp.h"

namespace crossdev::parity {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string sizes_str(at::IntArrayRef sizes) {
  std::string out = "[";
  for (size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + std::to_string(sizes[i]);
  return out + "]";
}

std::string number_str(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

void reject_unsupported(const at::Tensor& t, const char* which) {
  const auto fail = [&](const std::string& what) {
    throw std::invalid_argument(std::string("compare: ") + which + " is " + what + "; crossdev compares strided real tensors");
  };
  if (!t.defined()) fail("an undefined tensor");
  if (t.layout() != at::kStrided) fail("not strided");
  if (t.is_quantized()) fail("quantized");
  if (t.is_complex()) fail("complex");
  // assert_close compares 1-byte floats bitwise only (rtol = atol = 0); crossdev has no use for them.
  if (t.is_floating_point() && t.element_size() == 1) fail(std::string("a 1-byte float (") + c10::toString(t.scalar_type()) + ")");
}

// assert_close compares unsigned 16/32/64-bit values as int64 (promote_types refuses them).
at::ScalarType comparable(at::ScalarType t) {
  return t == at::kUInt16 || t == at::kUInt32 || t == at::kUInt64 ? at::kLong : t;
}

std::vector<std::int64_t> unravel(std::int64_t flat, at::IntArrayRef sizes) {
  std::vector<std::int64_t> index(sizes.size());
  for (size_t d = sizes.size(); d-- > 0;) {
    index[d] = flat % sizes[d];
    flat /= sizes[d];
  }
  return index;
}

// Fills the counts and the float64 metrics from the verdict mask `close`.
void measure(const at::Tensor& a, const at::Tensor& e, const at::Tensor& close, bool equal_nan, Comparison& c) {
  const at::Tensor a64 = a.to(at::kDouble).contiguous();
  const at::Tensor e64 = e.to(at::kDouble).contiguous();
  const at::Tensor ok = close.contiguous();
  const double* pa = a64.data_ptr<double>();
  const double* pe = e64.data_ptr<double>();
  const bool* pc = ok.data_ptr<bool>();

  // max_ulp: |a - e| / ulp(max(|e|, floor)) in the compared dtype (parity/ulp.h), the floor taken
  // from the tolerance so that no element the verdict accepts shows more than 2^(mantissa bits)
  // ulps (docs/parity.md); integers: |a - e|.
  const FloatFormat format = float_format(a.scalar_type());
  const bool floating = format.mantissa_digits > 0;
  c.ulp_floor = ulp_floor(c.tolerance.rtol, c.tolerance.atol, format);

  std::int64_t first = -1;
  for (std::int64_t i = 0; i < c.total; ++i) {
    if (!pc[i]) {
      ++c.mismatches;
      if (first < 0) first = i;
    }
    const double x = pa[i], y = pe[i];
    double abs_err = 0.0, rel_err = 0.0, ulp = 0.0;
    if (x == y || (std::isnan(x) && std::isnan(y) && equal_nan)) {
      // identical (including equal infinities and +0 vs -0): no error
    } else if (!std::isfinite(x) || !std::isfinite(y)) {
      abs_err = rel_err = ulp = kInf;
    } else {
      abs_err = std::fabs(x - y);
      rel_err = y == 0.0 ? kInf : abs_err / std::fabs(y);
      ulp = floating ? ulp_error_in(x, y, c.ulp_floor, format.mantissa_digits, format.min_exponent)
                     : abs_err;  // integers: one unit in the last place is 1
    }
    c.max_abs = std::max(c.max_abs, abs_err);
    c.max_rel = std::max(c.max_rel, rel_err);
    c.max_ulp = std::max(c.max_ulp, ulp);
  }
  if (first >= 0) {
    c.first_mismatch_index = unravel(first, a.sizes());
    c.first_mismatch_actual = pa[first];
    c.first_mismatch_expected = pe[first];
  }
}

}  // namespace

std::string Comparison::index_str() const {
  std::string out = "[";
  for (size_t i = 0; i < first_mismatch_index.size(); ++i) out += (i ? ", " : "") + std::to_string(first_mismatch_index[i]);
  return out + "]";
}

std::string Comparison::summary() const {
  const std::string metrics = "max_abs=" + number_str(max_abs) + ", max_rel=" + number_str(max_rel) +
                              ", max_ulp=" + number_str(max_ulp) + ", ulp_floor=" + number_str(ulp_floor) + " (" +
                              tolerance.str() + ")";
  if (pass) return "close: " + std::to_string(total) + " elements, " + metrics;
  if (mismatches == 0) return reason;  // an attribute mismatch: no values were compared
  return reason + "; " + metrics;
}

Comparison compare(const at::Tensor& actual, const at::Tensor& expected, const CompareOptions& options) {
  reject_unsupported(actual, "actual");
  reject_unsupported(expected, "expected");
  Comparison c;
  c.tolerance = options.tolerance.value_or(default_tolerance(actual.scalar_type(), expected.scalar_type()));

  // Attribute checks, in assert_close's order and wording.
  if (actual.sizes() != expected.sizes()) {
    c.reason = "The values for attribute 'shape' do not match: " + sizes_str(actual.sizes()) + " != " + sizes_str(expected.sizes()) + ".";
    return c;
  }
  if (options.check_dtype && actual.scalar_type() != expected.scalar_type()) {
    c.reason = std::string("The values for attribute 'dtype' do not match: ") + c10::toString(actual.scalar_type()) +
               " != " + c10::toString(expected.scalar_type()) + ".";
    return c;
  }

  at::Tensor a = actual.cpu(), e = expected.cpu();
  if (a.scalar_type() != e.scalar_type()) {
    const at::ScalarType common = at::promote_types(comparable(a.scalar_type()), comparable(e.scalar_type()));
    a = a.to(common);
    e = e.to(common);
  }
  c.total = a.numel();
  const at::Tensor close = at::isclose(a, e, c.tolerance.rtol, c.tolerance.atol, options.equal_nan);
  measure(a, e, close, options.equal_nan, c);
  c.pass = c.mismatches == 0;
  if (!c.pass) {
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.1f%%", 100.0 * static_cast<double>(c.mismatches) / static_cast<double>(c.total));
    c.reason = "Mismatched elements: " + std::to_string(c.mismatches) + " / " + std::to_string(c.total) + " (" + pct +
               "), first at " + c.index_str() + ": actual " + number_str(c.first_mismatch_actual) + " vs expected " +
               number_str(c.first_mismatch_expected);
  }
  return c;
}

}  // namespace crossdev::parity
