#pragma once
// Shared fixture of the sim backend tests: the backend registered, a known configuration active
// for the test's duration, the allocator cache empty, and the previous configuration restored.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include <ATen/ATen.h>

#include "sim/sim_backend.h"

namespace crossdev::sim::testing {

class SimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    register_backend();
    use(default_config(ProfileId::Plain));
  }
  void TearDown() override { scoped_.reset(); }

  // Replaces the configuration for the rest of the test.
  void use(const SimConfig& config) {
    scoped_.reset();
    scoped_ = std::make_unique<ScopedConfig>(config);
    empty_cache();
  }
  void use(ProfileId id, int device_count = -1) {
    use(device_count > 0 ? default_config(id, device_count) : default_config(id));
  }

  static at::TensorOptions on_sim(int index = 0) { return at::TensorOptions().device(sim_device(index)); }

 private:
  std::unique_ptr<ScopedConfig> scoped_;
};

// The message of a c10::Error without the C++ backtrace torch appends.
template <typename Fn>
std::string error_text(Fn&& fn) {
  try {
    fn();
  } catch (const c10::Error& e) {
    return e.what_without_backtrace();
  }
  return "<no error>";
}

}  // namespace crossdev::sim::testing
