#pragma once
// Random number generator of the sim device. Random ops are delegated to their CPU
// kernels, which only accept CPU generators; so a sim generator owns a CPU generator (its
// engine) and the delegation hands that engine to the kernel. Seeding a sim generator therefore
// reproduces exactly the sequence a CPU generator with the same seed produces, unless the divergence
// switch is on when it is seeded: the engine is then seeded with the seed XOR the kind's stream mix
// (divergence_switch.h), so sim draws its own numbers, as a real device's generator does, still
// deterministic for a seed; current_seed() reports the seed it was given.
#include <ATen/core/Generator.h>
#include <c10/core/GeneratorImpl.h>

#include <cstdint>

namespace crossdev::sim {

class SimGeneratorImpl final : public c10::GeneratorImpl {
 public:
  explicit SimGeneratorImpl(c10::DeviceIndex device_index);

  void set_current_seed(uint64_t seed) override;
  void set_offset(uint64_t offset) override;
  uint64_t get_offset() const override;
  uint64_t current_seed() const override;
  uint64_t seed() override;
  void set_state(const c10::TensorImpl& new_state) override;
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override;

  const at::Generator& cpu_engine() const { return engine_; }

 private:
  SimGeneratorImpl* clone_impl() const override;
  at::Generator engine_;
  std::uint64_t stream_mix_ = 0;  // 0: the CPU's stream; else the kind's mix, fixed when seeded
};

// One default generator per device index, created on first use.
const at::Generator& default_generator(c10::DeviceIndex device_index);
at::Generator new_generator(c10::DeviceIndex device_index);

}  // namespace crossdev::sim
