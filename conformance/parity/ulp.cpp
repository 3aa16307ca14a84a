#include "parity/ulp.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

namespace crossdev::parity {

int float_bit_width(c10::ScalarType dtype) noexcept {
  switch (dtype) {
    case c10::ScalarType::Half:
    case c10::ScalarType::BFloat16: return 16;
    case c10::ScalarType::Float: return 32;
    case c10::ScalarType::Double: return 64;
    default: return 0;
  }
}

c10::ScalarType bits_dtype(c10::ScalarType float_dtype) {
  switch (float_bit_width(float_dtype)) {
    case 16: return c10::ScalarType::Short;
    case 32: return c10::ScalarType::Int;
    case 64: return c10::ScalarType::Long;
    default: throw std::invalid_argument(std::string("ULP distance needs a floating dtype, got ") + c10::toString(float_dtype));
  }
}

std::uint64_t ulp_distance_bits(std::uint64_t a_bits, std::uint64_t b_bits, int width) noexcept {
  const std::uint64_t sign = std::uint64_t{1} << (width - 1);
  const std::uint64_t magnitude = sign - 1;
  const std::uint64_t ma = a_bits & magnitude, mb = b_bits & magnitude;
  if ((a_bits & sign) == (b_bits & sign)) return ma > mb ? ma - mb : mb - ma;
  return ma + mb;  // cannot overflow: each magnitude is below 2^(width-1)
}

namespace {

std::uint64_t bits_in(double v, c10::ScalarType dtype) {
  switch (dtype) {
    case c10::ScalarType::Half: return c10::Half(static_cast<float>(v)).x;
    case c10::ScalarType::BFloat16: return c10::BFloat16(static_cast<float>(v)).x;
    case c10::ScalarType::Float: {
      const float f = static_cast<float>(v);
      std::uint32_t u;
      std::memcpy(&u, &f, sizeof u);
      return u;
    }
    default: {
      std::uint64_t u;
      std::memcpy(&u, &v, sizeof u);
      return u;
    }
  }
}

}  // namespace

FloatFormat float_format(c10::ScalarType dtype) noexcept {
  switch (dtype) {
    case c10::ScalarType::Half: return {11, -14};
    case c10::ScalarType::BFloat16: return {8, -126};
    case c10::ScalarType::Float: return {24, -126};
    case c10::ScalarType::Double: return {53, -1022};
    default: return {};
  }
}

namespace {

double round_to(double v, c10::ScalarType dtype) {
  switch (dtype) {
    case c10::ScalarType::Half: return static_cast<float>(c10::Half(static_cast<float>(v)));
    case c10::ScalarType::BFloat16: return static_cast<float>(c10::BFloat16(static_cast<float>(v)));
    case c10::ScalarType::Float: return static_cast<float>(v);
    default: return v;
  }
}

FloatFormat checked_format(c10::ScalarType dtype) {
  const FloatFormat f = float_format(dtype);
  if (f.mantissa_digits == 0)
    throw std::invalid_argument(std::string("ULP needs a floating dtype, got ") + c10::toString(dtype));
  return f;
}

double ulp_in(double e, int digits, int min_exponent) noexcept {
  // Normal e: 2^(exponent - (digits - 1)), exponent = ilogb(e) (e = m * 2^exp, 1 <= m < 2).
  // Zero and subnormals: the smallest normal's ulp, which is also the subnormal spacing.
  const double mag = std::fabs(e);
  const int exponent = mag >= std::ldexp(1.0, min_exponent) ? std::ilogb(mag) : min_exponent;
  return std::ldexp(1.0, exponent - (digits - 1));
}

}  // namespace

double ulp_floor(double rtol, double atol, FloatFormat format) noexcept {
  if (format.mantissa_digits == 0 || !(atol > 0.0)) return 0.0;  // NaN atol: no floor either
  const double eps = std::ldexp(1.0, 1 - format.mantissa_digits);
  const double floor = atol / std::fmax(rtol, eps);  // fmax: a NaN rtol counts as eps
  return std::isfinite(floor) ? floor : std::numeric_limits<double>::max();
}

double ulp_error_in(double a, double e, double floor, int mantissa_digits, int min_exponent) noexcept {
  const double err = std::fabs(a - e);
  if (err == 0.0) return 0.0;
  if (!std::isfinite(err)) return err;  // finite values whose difference overflows (+-max)
  // Divide by a power of two as a scaling of the exponent; the quotient overflows only for
  // float64 errors above ~8.9e-16 against a zero/subnormal scale: saturate there.
  const double ulp = ulp_in(std::fmax(std::fabs(e), floor), mantissa_digits, min_exponent);
  const int scale = -std::ilogb(ulp);
  int err_exp = 0;
  std::frexp(err, &err_exp);
  if (err_exp + scale > std::numeric_limits<double>::max_exponent) return std::numeric_limits<double>::max();
  return std::ldexp(err, scale);
}

double ulp_of(double e, c10::ScalarType dtype) {
  const FloatFormat f = checked_format(dtype);
  if (!std::isfinite(e)) return std::numeric_limits<double>::quiet_NaN();
  return ulp_in(round_to(e, dtype), f.mantissa_digits, f.min_exponent);
}

double ulp_error(double a, double e, c10::ScalarType dtype, double floor) {
  const FloatFormat f = checked_format(dtype);
  if (std::isnan(a) || std::isnan(e)) throw std::invalid_argument("ULP error is undefined for NaN");
  if (!(floor >= 0.0)) throw std::invalid_argument("ULP error needs a floor >= 0, got " + std::to_string(floor));
  const double ar = round_to(a, dtype), er = round_to(e, dtype);
  if (ar == er) return 0.0;
  if (!std::isfinite(ar) || !std::isfinite(er)) return std::numeric_limits<double>::infinity();
  return ulp_error_in(ar, er, std::fmin(floor, std::numeric_limits<double>::max()), f.mantissa_digits, f.min_exponent);
}

std::uint64_t ulp_distance(double a, double b, c10::ScalarType dtype) {
  const int width = float_bit_width(dtype);
  if (width == 0) throw std::invalid_argument(std::string("ULP distance needs a floating dtype, got ") + c10::toString(dtype));
  if (std::isnan(a) || std::isnan(b)) throw std::invalid_argument("ULP distance is undefined for NaN");
  return ulp_distance_bits(bits_in(a, dtype), bits_in(b, dtype), width);
}

}  // namespace crossdev::parity
