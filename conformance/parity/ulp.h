#pragma once
// ULP distance through the ordered-integer representation of IEEE-754 values.
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

}  // namespace crossdev::parity
