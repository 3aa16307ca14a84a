#include "manager/device_chain.h"

#include <algorithm>
#include <stdexcept>

namespace crossdev::manager {

DeviceChain DeviceChain::seed003() {
  DeviceChain c;
  c.kinds_ = {DeviceKind::MPS, DeviceKind::CUDA, DeviceKind::CPU};
  return c;
}

DeviceChain DeviceChain::parse(std::string_view text) {
  DeviceChain c;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    std::string_view item = text.substr(start, comma == std::string_view::npos ? text.npos : comma - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    const auto kind = kind_from_name(item);
    if (!kind)
      throw std::invalid_argument("device chain '" + std::string(text) + "': unknown device kind '" + std::string(item) +
                                  "'; expected a comma-separated list of " + valid_kind_list() + " ending in cpu");
    if (std::find(c.kinds_.begin(), c.kinds_.end(), *kind) != c.kinds_.end())
      throw std::invalid_argument("device chain '" + std::string(text) + "': '" + std::string(item) + "' listed twice");
    c.kinds_.push_back(*kind);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (c.kinds_.empty() || c.kinds_.back() != DeviceKind::CPU)
    throw std::invalid_argument("device chain '" + std::string(text) + "': must end with cpu, the device that is always there");
  return c;
}

std::string DeviceChain::str() const {
  std::string out;
  for (DeviceKind k : kinds_) {
    if (!out.empty()) out += ',';
    out += kind_name(k);
  }
  return out;
}

ChainStep DeviceChain::next(const DeviceSpec& from, const HostProfile& host, std::string_view why) const {
  ChainStep step{from, from, ""};
  const std::string failed = from.str() + " failed (" + std::string(why) + ")";
  if (from.kind == DeviceKind::CPU) {
    step.reason = failed + "; cpu is the end of the chain " + str();
    return step;
  }
  auto pos = std::find(kinds_.begin(), kinds_.end(), from.kind);
  auto it = pos == kinds_.end() ? kinds_.end() - 1 : pos + 1;  // kinds outside the chain go to cpu
  for (; it != kinds_.end(); ++it) {
    if (*it == DeviceKind::CPU || host.has(*it)) {
      step.to = kind_info(*it).single_device ? DeviceSpec::of(*it) : DeviceSpec::of(*it, 0);
      step.reason = failed + "; next in chain " + str() + " present on this host: " + kind_name(*it) + " (" +
                    provenance_name(*it == DeviceKind::CPU ? Provenance::Real : host.provenance(*it)) + ")";
      if (pos == kinds_.end()) step.reason = failed + "; " + kind_name(from.kind) + " is not in chain " + str() + ", so cpu";
      return step;
    }
  }
  step.to = DeviceSpec::of(DeviceKind::CPU);
  step.reason = failed + "; nothing else in chain " + str() + " is present: cpu";
  return step;
}

}  // namespace crossdev::manager
