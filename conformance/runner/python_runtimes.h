#pragma once
// Device kinds whose runtime is a Python package (torch_xla's `xla`: real on any Linux CPU host
// through PJRT's CPU client). LibTorch alone does not see them: the device exists only in a process
// that imports the package. The engine asks `python -m crossdev.runtimes` (python/crossdev/runtimes.py,
// the one table of such runtimes) once per run, in a child, and a real one joins the host profile:
// `crossdev devices` lists it, the Python suites (opinfo, models, claims) run their cases on it in
// their worker, which imports the runtime, and a C++ suite, whose process has not imported it,
// reports its cases there not_run with not_in_this_process()'s reason.
#include <optional>
#include <string>
#include <vector>

#include "device/device_kind.h"
#include "device/host_profile.h"

namespace crossdev::conformance {

struct PythonRuntimeReport {
  DeviceKind kind = DeviceKind::CPU;
  bool real = false;
  int count = 0;
  std::string summary;  // what the device really is ("torch_xla 2.9.0 ..., PJRT's CPU client ..., not a TPU")
  std::string reason;   // why it is absent ("" when real)
};

// The reports of this environment's Python runtimes, probed once per process (or read from
// CROSSDEV_PYTHON_RUNTIMES_PROBED when an engine above this one probed). Never throws: a probe that
// cannot run (no interpreter with crossdev) reports nothing.
const std::vector<PythonRuntimeReport>& python_runtime_reports();

// The engine's own process (`crossdev run`) only: puts the reports in CROSSDEV_PYTHON_RUNTIMES_PROBED
// so its isolation workers inherit them instead of probing again (a few seconds with torch_xla).
void export_python_runtime_reports();

// Adds each real runtime to `host` as a real kind (a real device wins over a simulated one).
void attach_python_runtimes(HostProfile& host);

// Why a case on `kind` cannot run in this process: the kind is real only through a Python runtime
// this process has not imported (no c10 DeviceGuardImpl registered for it). nullopt otherwise.
std::optional<std::string> not_in_this_process(DeviceKind kind, const HostProfile& host);

}  // namespace crossdev::conformance
