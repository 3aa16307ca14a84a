#include "ops/generator_stream.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <ATen/Functions.h>

#include <mutex>
#include <utility>

namespace crossdev::ops::generator_stream {
namespace {

// Generators that keep a Philox (seed, offset) pair; set_offset/get_offset throw on the others.
bool has_offset(c10::DeviceType type) {
  return type == c10::kCUDA || type == c10::kXPU || type == c10::kMPS;
}

constexpr std::uint64_t kLow63 = (std::uint64_t{1} << 63) - 1;
// Offsets are multiples of 4, as CUDAGeneratorImpl requires of its Philox offset, so that any
// stream can be given to a CUDA generator (harness_generator).
constexpr std::uint64_t kOffsetAlign = ~std::uint64_t{3};

}  // namespace

at::Generator generator_for(const std::optional<at::Generator>& given, c10::Device device) {
  if (given.has_value() && given->defined()) {
    TORCH_CHECK(given->device().type() == device.type(), "Expected a '", device.type(),
                "' device type for generator but found '", given->device().type(), "'");
    return *given;
  }
  return at::globalContext().defaultGenerator(device);
}

Stream draw(at::Generator generator, std::uint64_t draws) {
  if (draws == 0) return {};
  const c10::DeviceType type = generator.device().type();
  if (has_offset(type)) {
    std::lock_guard<std::mutex> lock(generator.mutex());
    const Stream stream{generator.current_seed(), generator.get_offset()};
    generator.set_offset(stream.offset + (draws + 3) / 4 * 4);
    return stream;
  }
  if (type == c10::kCPU) {
    auto* cpu = at::check_generator<at::CPUGeneratorImpl>(generator);
    std::lock_guard<std::mutex> lock(generator.mutex());
    const std::uint64_t seed = cpu->random64() & kLow63;
    return {seed, cpu->random64() & kLow63 & kOffsetAlign};
  }
  // Two int64 values of random_(), which takes the generator's lock itself (holding it here would
  // deadlock): random64() % 2^63 each, the CPU branch's numbers for an engine in the same state.
  const at::Tensor drawn = at::empty({2}, at::TensorOptions().dtype(at::kLong).device(generator.device()))
                               .random_(generator)
                               .cpu();
  const std::int64_t* values = drawn.const_data_ptr<std::int64_t>();
  return {static_cast<std::uint64_t>(values[0]), static_cast<std::uint64_t>(values[1]) & kOffsetAlign};
}

at::Generator snapshot(const std::optional<at::Generator>& given, c10::Device device) {
  at::Generator generator = generator_for(given, device);
  std::lock_guard<std::mutex> lock(generator.mutex());
  return generator.clone();
}

std::optional<at::Generator> harness_generator(c10::Device device, std::uint64_t seed) {
  if (device.is_meta()) return std::nullopt;
  at::Generator cpu = at::detail::createCPUGenerator(seed);
  if (device.is_cpu()) return cpu;
  at::Generator generator = at::globalContext().getAcceleratorHooksInterface(device.type()).getNewGenerator(device.index());
  std::lock_guard<std::mutex> lock(generator.mutex());
  if (has_offset(device.type())) {
    const Stream stream = draw(std::move(cpu), 1);
    generator.set_current_seed(stream.seed);
    generator.set_offset(stream.offset);
  } else {
    // A device whose generator holds a CPU engine (sim) takes the CPU generator's state itself: the same
    // stream even where the device draws from a stream of its own (sim's divergence switch mixes its seed).
    // A generator that refuses a CPU state is seeded alike instead.
    try {
      generator.set_state(cpu.get_state());
    } catch (const c10::Error&) {
      generator.set_current_seed(seed);
    }
  }
  return generator;
}

}  // namespace crossdev::ops::generator_stream
