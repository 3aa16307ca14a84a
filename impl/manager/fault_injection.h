#pragma once
// Fault injection: make a call raise PyTorch's exact error text on hardware this host lacks
// (CUDA OOM, MPS placeholder storage, XLA version counters, ...), so classification and
// recovery run for every category on a CPU-only machine. A plan is installed per thread for
// a scope; device_safe checks it at the start of every attempt, as if the op raised the
// error itself. A fault fires only while its conditions hold, so a recovery that removes the
// cause (moving off the device, casting away float64) really stops it.
#include <optional>
#include <string>
#include <vector>

#include "manager/consistency.h"
#include "manager/error_info.h"

namespace crossdev::manager {

struct Fault {
  std::string site = "*";                 // op name device_safe runs, or "*" for any
  std::optional<DeviceKind> device;       // fires only while the attempt runs on this kind
  std::vector<std::string> when;          // named conditions (all must hold), see fault_condition_list()
  int times = -1;                         // how many times it may fire; -1 = every time
  std::string type = "RuntimeError";      // exception type (error_info.h)
  std::string text;                       // the verbatim message
  int fired = 0;
};

struct FaultContext {
  const std::string& site;
  const DeviceSpec& device;
  const std::vector<Placed>& inputs;
};

class FaultPlan {
 public:
  FaultPlan() = default;
  explicit FaultPlan(std::vector<Fault> faults);
  void add(Fault fault);
  const std::vector<Fault>& faults() const noexcept { return faults_; }
  int fired() const noexcept;
  // Throws the first armed fault whose site, device and conditions match.
  void check(const FaultContext& ctx);

 private:
  std::vector<Fault> faults_;
};

// Installs `plan` for this thread until destroyed (restoring the previous one).
class ScopedFaultPlan {
 public:
  explicit ScopedFaultPlan(FaultPlan& plan);
  ~ScopedFaultPlan();
  ScopedFaultPlan(const ScopedFaultPlan&) = delete;
  ScopedFaultPlan& operator=(const ScopedFaultPlan&) = delete;

 private:
  FaultPlan* previous_;
};

// The fault point: a no-op unless a plan is installed on this thread.
void fault_point(const FaultContext& ctx);

bool is_fault_condition(const std::string& name);
std::string fault_condition_list();  // "mixed_devices (inputs on more than one device), ..."

}  // namespace crossdev::manager
