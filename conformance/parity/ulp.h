#pragma once
// ULP metrics of IEEE-754 values.
//
// The parity metric (`max_ulp`, docs/parity.md "ULP error") is the error in units of the ulp of
// the expected value's magnitude, floored by a scale taken from the tolerance:
//     ulp_error(a, e; floor) = |a - e| / ulp(max(|e|, floor))
//     floor = ulp_floor(rtol, atol) = atol / max(rtol, eps)        (eps = 2^-(mantissa digits - 1))
// where ulp(x) = 2^(exponent(x) - (mantissa digits - 1)) for a normal x, and for zero and the
// subnormals the smallest normal's ulp (= the subnormal spacing: float64 2^-1074, float32
// 2^-149, float16 2^-24, bfloat16 2^-133). Where |e| >= floor it is Goldberg's ulp error of e;
// below the floor, where assert_close's atol term outweighs rtol * |e|, errors are counted in
// ulps of the floor, so an element that passes |a - e| <= atol + rtol * |e| (rtol <= 1/5) is
// always below 2^(mantissa digits - 1) ulps (the proof is in docs/parity.md). floor = 0 (an
// exact comparison, rtol = atol = 0) gives the unfloored figure, |a - e| / ulp(e).
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

// |a - e| / ulp(max(|e|, floor)) for finite values already in `dtype` and a finite floor >= 0 (no
// rounding, no checks; the comparator's inner loop). Saturates at DBL_MAX where the quotient
// overflows (float64, floor 0 and e zero or subnormal).
double ulp_error_in(double a, double e, double floor, int mantissa_digits, int min_exponent) noexcept;

// Rounds a and e to `dtype`, then: 0 when they are equal (equal infinities included), +inf when
// either is infinite and they differ, else |a - e| / ulp(max(|e|, floor)). floor = 0 is the
// unfloored ulp error of e. Throws std::invalid_argument for non-floating dtypes, NaN inputs or a
// negative or NaN floor.
double ulp_error(double a, double e, c10::ScalarType dtype, double floor);

// The format of a floating dtype: mantissa digits including the implicit bit (53, 24, 11, 8)
// and the exponent of the smallest normal (-1022, -126, -14, -126). {0, 0} for other dtypes.
struct FloatFormat {
  int mantissa_digits = 0;
  int min_exponent = 0;
};
FloatFormat float_format(c10::ScalarType dtype) noexcept;

// The floor of the ulp error for a comparison at (rtol, atol) in a format: atol / max(rtol, eps),
// the magnitude below which atol outweighs the relative term (eps = 2^(1 - mantissa digits): a
// rtol below the dtype's epsilon cannot be resolved, so it counts as eps). 0 when atol is 0,
// negative or NaN, and for a format with no mantissa (integers); DBL_MAX for an infinite atol.
double ulp_floor(double rtol, double atol, FloatFormat format) noexcept;

}  // namespace crossdev::parity
