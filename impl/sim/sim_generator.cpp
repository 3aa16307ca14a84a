#include "sim/sim_generator.h"

#include <array>
#include <mutex>

#include <ATen/CPUGeneratorImpl.h>
#include <c10/util/Exception.h>

#include "sim/divergence_switch.h"
#include "sim/sim_allocator.h"
#include "sim/sim_config.h"
#include "sim/sim_guard.h"

namespace crossdev::sim {

SimGeneratorImpl::SimGeneratorImpl(c10::DeviceIndex device_index)
    : c10::GeneratorImpl(c10::Device(c10::DeviceType::PrivateUse1, device_index),
                         c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)),
      engine_(at::make_generator<at::CPUGeneratorImpl>()) {}

void SimGeneratorImpl::set_current_seed(uint64_t seed) {
  const auto config = current_config();
  stream_mix_ = config->diverge ? divergence_traits(config->profile).stream_mix : 0;
  engine_.set_current_seed(seed ^ stream_mix_);
}
// The engine (a CPU generator) has no Philox offset. A sim generator reports 0 and accepts 0, so
// that torch.Generator's pickling (__reduce__ / __setstate__, which copy.deepcopy and AOTAutograd
// use on a generator argument) works; any other offset is refused.
void SimGeneratorImpl::set_offset(uint64_t offset) { TORCH_CHECK(offset == 0, "sim Generator does not use offset"); }
uint64_t SimGeneratorImpl::get_offset() const { return 0; }
uint64_t SimGeneratorImpl::current_seed() const { return engine_.current_seed() ^ stream_mix_; }
uint64_t SimGeneratorImpl::seed() {
  const uint64_t random = engine_.seed();  // a nondeterministic seed, then seeded as set_current_seed does
  set_current_seed(random);
  return random;
}
void SimGeneratorImpl::set_state(const c10::TensorImpl& new_state) { engine_.unsafeGetGeneratorImpl()->set_state(new_state); }
c10::intrusive_ptr<c10::TensorImpl> SimGeneratorImpl::get_state() const { return engine_.unsafeGetGeneratorImpl()->get_state(); }

SimGeneratorImpl* SimGeneratorImpl::clone_impl() const {
  auto* copy = new SimGeneratorImpl(device().index());
  copy->engine_ = engine_.clone();
  copy->stream_mix_ = stream_mix_;
  return copy;
}

const at::Generator& default_generator(c10::DeviceIndex device_index) {
  static std::array<at::Generator, kMaxSimDevices> generators;
  static std::array<std::once_flag, kMaxSimDevices> created;
  const int index = device_index < 0 ? current_device() : device_index;
  TORCH_CHECK(index >= 0 && index < kMaxSimDevices, "sim: no generator for device index ", index);
  std::call_once(created[index], [&] {
    generators[index] = at::make_generator<SimGeneratorImpl>(static_cast<c10::DeviceIndex>(index));
    generators[index].set_current_seed(c10::default_rng_seed_val);
  });
  return generators[index];
}

at::Generator new_generator(c10::DeviceIndex device_index) {
  return at::make_generator<SimGeneratorImpl>(device_index < 0 ? static_cast<c10::DeviceIndex>(current_device())
                                                               : device_index);
}

}  // namespace crossdev::sim
