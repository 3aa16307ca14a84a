#include "parity/dropout_check.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include <ATen/ATen.h>

namespace crossdev::parity {

std::string DropoutCheck::summary() const {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "kept %lld, dropped %lld, ambiguous %lld, unexplained %lld of %lld; keep rate %.5f vs %.5f (%.2f sigma)",
                static_cast<long long>(kept), static_cast<long long>(dropped), static_cast<long long>(ambiguous),
                static_cast<long long>(unexplained), static_cast<long long>(total), keep_rate, expected_keep_rate,
                deviation_sigmas);
  return pass ? std::string(buf) : reason + "; " + buf;
}

bool within_binomial_bound(std::int64_t kept, std::int64_t n, double keep_probability, double max_sigmas) noexcept {
  if (n == 0) return true;
  const double mean = static_cast<double>(n) * keep_probability;
  const double sigma = std::sqrt(static_cast<double>(n) * keep_probability * (1.0 - keep_probability));
  return std::fabs(static_cast<double>(kept) - mean) <= max_sigmas * sigma;
}

DropoutCheck check_dropout(const at::Tensor& out, const at::Tensor& kept_value, const at::Tensor& dropped_value, double p,
                           const Tolerance& tolerance, double max_sigmas) {
  if (!(p > 0.0 && p < 1.0)) throw std::invalid_argument("check_dropout: p must be in (0, 1), got " + std::to_string(p));
  if (out.sizes() != kept_value.sizes() || out.sizes() != dropped_value.sizes())
    throw std::invalid_argument("check_dropout: out, kept_value and dropped_value must have one shape");

  const at::Tensor o = out.cpu();
  const auto close_to = [&](const at::Tensor& v) {
    return at::isclose(o, v.cpu().to(o.scalar_type()), tolerance.rtol, tolerance.atol, /*equal_nan=*/false).contiguous();
  };
  const at::Tensor is_kept = close_to(kept_value);
  const at::Tensor is_dropped = close_to(dropped_value);

  DropoutCheck c;
  c.total = o.numel();
  c.expected_keep_rate = 1.0 - p;
  c.kept = at::logical_and(is_kept, is_dropped.logical_not()).sum().item<std::int64_t>();
  c.dropped = at::logical_and(is_dropped, is_kept.logical_not()).sum().item<std::int64_t>();
  c.ambiguous = at::logical_and(is_kept, is_dropped).sum().item<std::int64_t>();
  c.unexplained = c.total - c.kept - c.dropped - c.ambiguous;
  const std::int64_t n = c.kept + c.dropped;
  c.keep_rate = n ? static_cast<double>(c.kept) / static_cast<double>(n) : 0.0;
  if (n) {
    const double sigma = std::sqrt(static_cast<double>(n) * p * (1.0 - p));
    c.deviation_sigmas = std::fabs(static_cast<double>(c.kept) - static_cast<double>(n) * (1.0 - p)) / sigma;
  }

  if (c.unexplained > 0) {
    const at::Tensor bad = at::logical_or(is_kept, is_dropped).logical_not().reshape({-1}).nonzero();
    std::int64_t flat = bad[0][0].item<std::int64_t>();
    c.first_unexplained_index.resize(o.dim());
    for (std::int64_t d = o.dim(); d-- > 0;) {
      c.first_unexplained_index[d] = flat % o.size(d);
      flat /= o.size(d);
    }
    std::string index = "[";
    for (size_t i = 0; i < c.first_unexplained_index.size(); ++i) index += (i ? ", " : "") + std::to_string(c.first_unexplained_index[i]);
    c.reason = std::to_string(c.unexplained) + " elements are neither scale*(x+bias)/(1-p)+residual nor residual, first at " + index + "]";
  } else if (!within_binomial_bound(c.kept, n, 1.0 - p, max_sigmas)) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "keep rate %.5f is %.2f sigma from 1-p = %.5f (bound %.1f sigma, n = %lld)", c.keep_rate,
                  c.deviation_sigmas, 1.0 - p, max_sigmas, static_cast<long long>(n));
    c.reason = buf;
  }
  c.pass = c.reason.empty();
  return c;
}

}  // namespace crossdev::parity
