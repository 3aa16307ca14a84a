#pragma once
// Where a random op's counter-based stream comes from: torch's generators, as ATen's dropout.
//
// A stream is a (seed, offset) pair: value i of a call is portable_random's value number
// offset + i of the key derived from seed (portable_random.h), so the same (seed, offset) gives
// the same bits on the CPU, on CUDA and in the composite kernel. A call draws its stream from the
// generator it is given, or from the default generator of its device, and advances it:
//   CUDA (Philox, offset-capable)  seed = the generator's seed, offset = its Philox offset, which
//       advances by the call's draws rounded up to a multiple of 4, as
//       CUDAGeneratorImpl::philox_cuda_state(increment) does (under CUDA graph capture the
//       generator refuses, with ATen's error);
//   CPU (mt19937, no offset)       seed and offset are two 64-bit draws of the engine, masked
//       to 63 bits (what random_() on an int64 tensor draws; Inductor seeds its CPU random ops
//       the same way), the offset rounded down to a multiple of 4 (a CUDA generator can hold it);
//   any other backend (sim)        the same two values, drawn with random_() on that device: sim's
//       generator runs a CPU engine, so a sim generator and a CPU generator seeded alike give one
//       stream.
// torch.manual_seed(s) therefore reproduces a call, and two successive calls differ.
#include <ATen/core/Generator.h>
#include <ATen/core/ivalue.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <optional>

namespace crossdev::ops::generator_stream {

struct Stream {
  std::uint64_t seed = 0;
  std::uint64_t offset = 0;
};

// `given` when defined, else the default generator of `device`. A generator of another device
// type is refused with ATen's message (at::check_generator): "Expected a 'cpu' device type for
// generator but found 'cuda'".
at::Generator generator_for(const std::optional<at::Generator>& given, c10::Device device);

// The stream of a call consuming `draws` values, taken from `generator`, which advances (under
// its mutex where this code reads it). draws = 0 leaves the generator alone and returns {0, 0}.
Stream draw(at::Generator generator, std::uint64_t draws);

// A copy of the generator a call on `device` would draw from (`given` or the default), taken under
// its mutex: what autograd hands the backward, so that it redraws the forward's stream.
at::Generator snapshot(const std::optional<at::Generator>& given, c10::Device device);

// The generator the conformance harness hands a case with `seed` on `device`: its first stream is
// the one a CPU generator seeded `seed` gives, on every device (CPU: a generator seeded `seed`; sim:
// a generator given that CPU generator's state, whatever stream sim's divergence switch gives it
// otherwise; offset-capable devices: a new generator set to that stream's seed and offset). Every
// implementation of one case then drops the same elements. nullopt on Meta (no generator).
std::optional<at::Generator> harness_generator(c10::Device device, std::uint64_t seed);

}  // namespace crossdev::ops::generator_stream
