#pragma once
// matrices/bench/bench.yaml: the table every benchmark case is registered from.
//
//   suite: bench
//   cases:
//     - {id: op.modulate, source: seed 000, kind: op, op: modulate, sizes: [1M, 8M]}
//     - {id: resolve.cuda1.cuda-x2, source: seed 002, kind: policy_resolve, request: "cuda:1", host: cuda-x2}
//     - {id: bandwidth.cpu, source: STREAM, kind: bandwidth}
//
// The file has the conformance matrices' shape (and is parsed by their loader, so it gets the
// same file:line errors), but lives in matrices/bench/ so the conformance catalog, which reads
// only top-level matrices/*.yaml, never runs it as a suite. Each `kind` accepts its own keys
// (kinds table in bench_matrix.cpp); every row has an optional `profile` (default | long):
// long rows run only with --crossdev_profile=long.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "device/device_kind.h"
#include "device/device_spec.h"
#include "spec/bench_values.h"
#include "matrix/matrix_file.h"
#include "ops/op_spec.h"
#include "policy/decision.h"
#include "policy/preset.h"

namespace crossdev::bench {

struct RowHeader {
  std::string id;
  SourceLocation where;
  Profile profile = Profile::Default;
};

// Every op x impl x dtype x size x device x pass combination becomes one benchmark.
struct OpRow {
  RowHeader header;
  const ops::OpSpec* op = nullptr;
  std::vector<ops::Impl> impls;          // default: all three
  std::vector<at::ScalarType> dtypes;    // default: float32
  std::vector<Size> sizes;               // required
  std::vector<DeviceKind> devices;       // default: cpu, cuda (kinds this host lacks are not run)
  std::vector<Pass> passes;              // default: fwd, fwd_bwd
  std::uint64_t seed = 0;
};

// RedirectPolicy::resolve() on a host profile (a pure function: the host is data, not a device).
struct ResolveRow {
  RowHeader header;
  std::optional<DeviceSpec> request;     // absent: "no device given"
  std::string request_text;              // as written ("none" when absent)
  std::string host;                      // named host or simulate spec
  const Preset* preset = nullptr;        // default: torchdevice
  Via via = Via::Create;
  bool include_parse = false;            // time try_parse_device(request_text) + resolve
};

// The bandwidth probe itself, as a benchmark (its own result, next to the startup peak).
struct BandwidthRow {
  RowHeader header;
  std::vector<DeviceKind> devices;       // default: cpu, cuda
};

struct BenchMatrix {
  std::string path;
  std::vector<OpRow> ops;
  std::vector<ResolveRow> resolves;
  std::vector<BandwidthRow> bandwidth;
  // op/impl/dtype/size/device/pass -> "row id (file:line)": two rows may not register one case.
  std::map<std::string, std::string> op_case_origin;
};

// Throws YamlError("file:line: ...") naming the key and what was expected.
BenchMatrix load_bench_matrix(const std::string& path);

// The kinds and their keys, for --help and docs.
std::string bench_kind_summary();

}  // namespace crossdev::bench
