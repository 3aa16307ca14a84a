#include "sim/sim_config.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include <c10/util/Exception.h>

#include "sim/divergence_switch.h"
#include "sim/sim_allocator.h"

namespace crossdev::sim {
namespace {

std::mutex& config_mutex() {
  static std::mutex m;
  return m;
}
std::shared_ptr<const SimConfig>& config_slot() {
  static std::shared_ptr<const SimConfig> slot = std::make_shared<const SimConfig>(default_config(ProfileId::Plain));
  return slot;
}

bool env_switch_on(const char* name) {
  if (name == nullptr) return false;
  const char* value = std::getenv(name);
  return value != nullptr && std::strcmp(value, "1") == 0;
}

}  // namespace

SimConfig default_config(ProfileId id, std::optional<int> device_count) {
  const EmulationProfile& p = profile(id);
  SimConfig c;
  c.profile = id;
  c.device_count = device_count.value_or(p.default_device_count);
  c.unsupported_ops = p.default_unsupported_ops;
  c.unsupported_ops_on_cpu = env_switch_on(p.cpu_switch_env);
  try {
    c.diverge = diverge_from_env(id);
  } catch (const std::invalid_argument& e) {
    TORCH_CHECK_VALUE(false, e.what());
  }
  return c;
}

void set_config(const SimConfig& config) {
  const EmulationProfile& p = profile(config.profile);
  TORCH_CHECK(config.device_count >= 1 && config.device_count <= p.max_device_count, "sim: profile ", p.name,
              " supports 1..", p.max_device_count, " devices, but ", config.device_count, " were requested");
  std::lock_guard<std::mutex> lock(config_mutex());
  const int live_beyond = SimAllocator::instance().first_device_with_live_memory(config.device_count);
  TORCH_CHECK(live_beyond < 0, "sim: cannot switch to ", config.device_count, " device(s) while tensors are alive on sim:",
              live_beyond, "; free them first");
  std::atomic_store(&config_slot(), std::make_shared<const SimConfig>(config));
}

std::shared_ptr<const SimConfig> current_config() { return std::atomic_load(&config_slot()); }

const EmulationProfile& current_profile() { return profile(current_config()->profile); }

void set_profile(ProfileId id, std::optional<int> device_count) { set_config(default_config(id, device_count)); }

ScopedConfig::ScopedConfig(const SimConfig& config) : previous_(current_config()) { set_config(config); }
ScopedConfig::~ScopedConfig() {
  try {
    set_config(*previous_);
  } catch (const std::exception&) {
    // Tensors still alive on a removed index: keep the current configuration rather than throw
    // from a destructor; the next set_config reports the problem.
  }
}

bool op_listed(const std::vector<std::string>& list, const std::string& name, const std::string& overload) {
  for (const auto& entry : list) {
    if (entry == name) return true;
    if (!overload.empty() && entry.size() == name.size() + 1 + overload.size() && entry.compare(0, name.size(), name) == 0 &&
        entry[name.size()] == '.' && entry.compare(name.size() + 1, overload.size(), overload) == 0)
      return true;
  }
  return false;
}

}  // namespace crossdev::sim
