#include "parity/ulp.h"

#include <cmath>
#include <cstring>
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

std::uint64_t ulp_distance(double a, double b, c10::ScalarType dtype) {
  const int width = float_bit_width(dtype);
  if (width == 0) throw std::invalid_argument(std::string("ULP distance needs a floating dtype, got ") + c10::toString(dtype));
  if (std::isnan(a) || std::isnan(b)) throw std::invalid_argument("ULP distance is undefined for NaN");
  return ulp_distance_bits(bits_in(a, dtype), bits_in(b, dtype), width);
}

}  // namespace crossdev::parity
