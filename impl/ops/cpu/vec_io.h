#pragma once
// Loads and stores between storage dtype and opmath vectors. float/double compute in their own
// width; float16/bfloat16 widen to Vectorized<float> (kWidth floats per step) so every op
// accumulates in at::opmath_type, as ATen's own reduced-precision kernels do.
#include <ATen/OpMathType.h>
#include <ATen/cpu/vec/functional.h>
#include <ATen/cpu/vec/vec.h>

#include <cstdint>
#include <type_traits>

namespace crossdev::ops::cpu {
inline namespace CPU_CAPABILITY {  // compiled once per instruction set

template <typename scalar_t>
struct VecIO {
  using opmath_t = at::opmath_type<scalar_t>;
  using Vec = at::vec::Vectorized<opmath_t>;
  static constexpr std::int64_t kWidth = Vec::size();
  static constexpr bool kWidens = !std::is_same_v<scalar_t, opmath_t>;

  static Vec load(const scalar_t* p) {
    if constexpr (kWidens) {
      Vec out;
      at::vec::load_to_float<scalar_t>(p, out);
      return out;
    } else {
      return Vec::loadu(p);
    }
  }

  static void store(scalar_t* p, const Vec& v) {
    if constexpr (kWidens) {
      __at_align__ opmath_t buffer[kWidth];
      v.store(buffer);
      for (std::int64_t i = 0; i < kWidth; ++i) p[i] = static_cast<scalar_t>(buffer[i]);
    } else {
      v.store(p);
    }
  }
};

// A kernel body's names for scalar_t's vector I/O: IO (VecIO<scalar_t>), opmath_t (what it computes
// in) and Vec (Vectorized<opmath_t>). In an AT_DISPATCH lambda, or a function or class templated on
// scalar_t.
#define CROSSDEV_VEC_IO_TYPES(scalar_type)             \
  using IO = ::crossdev::ops::cpu::VecIO<scalar_type>; \
  using opmath_t = typename IO::opmath_t;              \
  using Vec = typename IO::Vec

// Horizontal sum of a vector of partial sums.
template <typename opmath_t>
opmath_t reduce_add(const at::vec::Vectorized<opmath_t>& v) {
  return at::vec::vec_reduce_all<opmath_t>([](auto a, auto b) { return a + b; }, v);
}

}  // namespace CPU_CAPABILITY
}  // namespace crossdev::ops::cpu
