#pragma once
// ULP metrics of IEEE-754 values.
//
// The parity metric (`max_ulp`, docs/parity.md) is ulp_error: the error in units of the
// EXPECTED value's ulp in the compared dtype,
//     ulp_error(a, e) = |a - e| / ulp(e)
// where ulp(e) = 2^(exponent(e) - (mantissa digits - 1)) for a normal e, and for zero and the
// subnormals the smallest normal's ulp (= the subnormal spacing: float64 2^-1074, float32
// 2^-149, float16 2^-24, bfloat16 2^-133). It is a scaled relative error: it means the same
// thing on either side of zero and never counts the representable values in between.
//
// ulp_distance below is the older step count (how many representable values lie between a and
// b); it is kept for tests that build values k steps apart, not used for `max_ulp`.
//
// A float's bit pattern, read as an unsigned integer, is sign-magnitude: for values of one
// sign, consecutive representable values have consecutive magnitudes. Mapping a value to
// -magnitude when its sign bit is set puts every value of the dtype on one integer line on
// which neighbours differ by exactly 1, and +0 and -0 meet at 0. The ULP distance of a and b
// is the distance of their points on that line:
//     same sign:      |mag(a) - mag(b)|
//     opposite signs:  mag(a) + mag(b)
// Infinities land one step past the largest finite value (their bit patterns do that by
// themselves); NaN has no place on the line, so callers decide what a NaN pair means.
#include <cstdint>

#include <c10/core/ScalarType.h>

namespace crossdev::parity {

// Bit width of a floating dtype (16 for float16/bfloat16, 32, 64); 0 for anything else.
int float_bit_width(c10::ScalarType dtype) noexcept;

// The integer dtype of the same width, to reinterpret a tensor's bits with Tensor::view(dtype).
c10::ScalarType bits_dtype(c10::ScalarType float_dtype);  // throws std::invalid_argument

// Distance of two raw bit patterns of a `width`-bit IEEE format (neither may be NaN).
std::uint64_t ulp_distance_bits(std::uint64_t a_bits, std::uint64_t b_bits, int width) noexcept;

// Rounds a and b to `dtype` first, then measures (used by tests and the Python module).
// Throws std::invalid_argument for non-floating dtypes or NaN inputs.
std::uint64_t ulp_distance(double a, double b, c10::ScalarType dtype);

// ulp(e) in `dtype` for a finite e that is representable in it (see above); NaN for a
// non-finite e. Throws std::invalid_argument for non-floating dtypes.
double ulp_of(double e, c10::ScalarType dtype);

// |a - e| / ulp(e) for finite values already in `dtype` (no rounding, no checks; the comparator's
// inner loop). Saturates at DBL_MAX where the quotient overflows (float64, e zero or subnormal).
double ulp_error_in(double a, double e, int mantissa_digits, int min_exponent) noexcept;

// Rounds a and e to `dtype`, then: 0 when they are equal (equal infinities included), +inf when
// either is infinite and they differ, else |a - e| / ulp(e).
// Throws std::invalid_argument for non-floating dtypes or NaN inputs.
double ulp_error(double a, double e, c10::ScalarType dtype);

// The format of a floating dtype: mantissa digits including the implicit bit (53, 24, 11, 8)
// and the exponent of the smallest normal (-1022, -126, -14, -126). {0, 0} for other dtypes.
struct FloatFormat {
  int mantissa_digits = 0;
  int min_exponent = 0;
};
FloatFormat float_format(c10::ScalarType dtype) noexcept;

}  // namespace crossdev::parity
