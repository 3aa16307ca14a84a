#include "device/host_profile.h"

#include <cstdlib>
#include <stdexcept>

#include "util/named_table.h"

namespace crossdev {
namespace {

// Named hosts used by the matrices; each maps to a simulate spec.
struct NamedHost {
  const char* name;
  const char* spec;
};
constexpr NamedHost kNamedHosts[] = {
    {"cpu-only", ""},     {"cuda-x1", "cuda:1"}, {"cuda-x2", "cuda:2"}, {"mps", "mps"},
    {"xpu", "xpu"},       {"tpu", "xla:1"},      {"cuda+mps", "cuda:1,mps"},
    {"xpu+cuda", "xpu:1,cuda:1"}, {"all", "cuda:2,mps,xpu:1,xla:1"},
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

const char* provenance_name(Provenance p) noexcept {
  switch (p) {
    case Provenance::Real: return "real";
    case Provenance::Simulated: return "simulated";
    case Provenance::Absent: break;
  }
  return "absent";
}

HostProfile::HostProfile() {
  set(DeviceKind::CPU, 1, Provenance::Real, {DeviceProperties{"host CPU", -1, -1, -1, -1}});
}

void HostProfile::set(DeviceKind kind, int count, Provenance provenance, std::vector<DeviceProperties> devices) {
  auto& p = kinds_[kind_slot(kind)];
  p.count = count;
  p.provenance = count > 0 ? provenance : Provenance::Absent;
  p.devices = std::move(devices);
}

bool HostProfile::any_simulated() const noexcept {
  for (const auto& p : kinds_)
    if (p.provenance == Provenance::Simulated) return true;
  return false;
}

std::string HostProfile::summary() const {
  std::string out;
  for (DeviceKind kind : kAllDeviceKinds) {
    const auto& p = presence(kind);
    if (p.count == 0) continue;
    if (!out.empty()) out += ", ";
    out += std::string(kind_name(kind)) + " x" + std::to_string(p.count) + " (" + provenance_name(p.provenance) + ")";
  }
  return out;
}

std::vector<SimulatedKind> parse_simulate_spec(std::string_view spec) {
  std::vector<SimulatedKind> out;
  spec = trim(spec);
  if (spec.empty() || spec == "none" || spec == "cpu") return out;
  std::size_t start = 0;
  while (start <= spec.size()) {
    const std::size_t comma = spec.find(',', start);
    const std::string_view item = trim(spec.substr(start, comma == std::string_view::npos ? spec.npos : comma - start));
    const auto bad = [&](const std::string& why) {
      return std::invalid_argument("invalid --simulate item '" + std::string(item) + "' in '" + std::string(spec) +
                                   "': " + why + "; expected a comma-separated list of kind[:count] with kind one of " +
                                   valid_kind_list());
    };
    const std::size_t colon = item.find(':');
    const std::string_view name = item.substr(0, colon);
    const auto kind = kind_from_name(name);
    if (!kind) throw bad("unknown device kind '" + std::string(name) + "'");
    int count = 1;
    if (colon != std::string_view::npos) {
      const std::string_view digits = item.substr(colon + 1);
      if (digits.empty() || digits.size() > 3) throw bad("count must be 1..127");
      count = 0;
      for (char c : digits) {
        if (c < '0' || c > '9') throw bad("count must be 1..127");
        count = count * 10 + (c - '0');
      }
      if (count < 1 || count > 127) throw bad("count must be 1..127");
    }
    if (*kind == DeviceKind::CPU) {
      if (count != 1) throw bad("a host has exactly one cpu device");
    } else {
      for (const auto& prior : out)
        if (prior.kind == *kind) throw bad("kind listed twice");
      if (kind_info(*kind).single_device && count != 1) throw bad(std::string(kind_name(*kind)) + " has exactly one device");
      out.push_back({*kind, count});
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

DeviceProperties simulated_properties(DeviceKind kind, int index) {
  DeviceProperties props;
  props.name = std::string("simulated ") + kind_name(kind) + ":" + std::to_string(index);
  // CUDA-shaped fields for every kind, as seed 002's masquerade reports MPS "as CUDA" (major 7, minor 0).
  props.major = kind == DeviceKind::CUDA ? 8 : 7;
  props.minor = 0;
  props.multiprocessor_count = kind == DeviceKind::CUDA ? 108 : 8;
  props.total_memory = 16LL << 30;
  return props;
}

HostProfile HostProfile::hypothetical(std::string_view spec) {
  HostProfile host;
  for (const auto& sim : parse_simulate_spec(spec)) {
    std::vector<DeviceProperties> devices;
    for (int i = 0; i < sim.count; ++i) devices.push_back(simulated_properties(sim.kind, i));
    host.set(sim.kind, sim.count, Provenance::Simulated, std::move(devices));
  }
  host.source_ = "hypothetical:" + std::string(spec);
  return host;
}

HostProfile HostProfile::probe_with_simulation(std::string_view spec) {
  HostProfile host = probe();
  if (trim(spec).empty()) return host;
  for (const auto& sim : parse_simulate_spec(spec)) {
    if (host.has(sim.kind)) continue;  // a real device always takes precedence
    std::vector<DeviceProperties> devices;
    for (int i = 0; i < sim.count; ++i) devices.push_back(simulated_properties(sim.kind, i));
    host.set(sim.kind, sim.count, Provenance::Simulated, std::move(devices));
  }
  host.source_ = "probe+simulate:" + std::string(trim(spec));
  return host;
}

HostProfile HostProfile::named_or_spec(std::string_view name_or_spec) {
  if (const auto* named = named::find(kNamedHosts, name_or_spec)) {
    HostProfile host = hypothetical(named->spec);
    host.source_ = std::string("hypothetical:") + named->name;
    return host;
  }
  return hypothetical(name_or_spec);
}

const std::string& named_host_list() {
  static const std::string list = named::names(kNamedHosts);
  return list;
}

std::string simulate_from_env() {
  const char* value = std::getenv("CROSSDEV_SIMULATE");
  return value ? std::string(value) : std::string();
}

}  // namespace crossdev
