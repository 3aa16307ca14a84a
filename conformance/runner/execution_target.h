#pragma once
// What a bundle ran on: device kinds with their provenance, LibTorch/CUDA versions, compiler,
// git commit and host. Filled once per run.
#include <string>

#include "device/host_profile.h"

namespace crossdev::conformance {

struct ExecutionTarget {
  std::string device_kind;      // the most capable real kind: "cuda", "mps", ... or "cpu"
  std::string device_model;     // name of that kind's device 0
  std::string driver;           // driver / runtime version where known, "" otherwise
  std::string libtorch_version;
  std::string cuda_version;     // "" when LibTorch has no CUDA
  std::string cuda_kernels;     // crossdev's own: "built" or "not built (<why>)"; "" when LibTorch has no CUDA
  std::string compiler;
  std::string git_commit;
  std::string host;
  bool simulated = false;       // any simulated kind in this run
  std::string simulate_spec;
  std::string sim_diverge;  // the simulated kinds sim diverges from the CPU on ("cuda,mps"; CROSSDEV_SIM_DIVERGE), "" for none
  std::string shard;  // "I/N" of `crossdev run --shard I/N` (N > 1), else ""
};

ExecutionTarget describe_execution_target(const HostProfile& host, const std::string& simulate_spec);

}  // namespace crossdev::conformance
