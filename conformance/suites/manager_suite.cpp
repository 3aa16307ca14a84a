// suite: manager — the DeviceManager API across host profiles (seeds 001-004), one behaviour
// per row of matrices/manager.yaml. Every row names a `check`; each check is one row of
// kChecks below with the keys it takes, so a key that means nothing for a check is an error.
//
//   capability     device, field (dtype:<name> | compile | distributed | inference | low_precision), expect
//   device_chain   from, expect (devices walked, in order), [chain]
//   auto_detect    expect, [policy]
//   ensure_device  inputs_on, expect, expect_moves, [target, policy]
//   ensure_dtype   device, dtypes, expect_dtypes, expect_casts, [unify]
//   memory_stats   device, expect (measured | simulated)
//   empty_cache    device, expect (ok | noop)
//   properties     device, expect_simulated, [expect_name, expect_major, expect_minor, expect_mp]
//   stream_event   device, scenario, expect, [expect_emulated]
//   checkpoint     save_host, save_device, map_location, dtype, expect_device, expect_dtype
// All rows take `host` (a named host or simulate spec; default cpu-only).
#include <unistd.h>

#include "util/named_table.h"

#include <c10/util/StringUtil.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <thread>

#include <ATen/ATen.h>

#include "manager/checkpoint.h"
#include "manager/consistency.h"
#include "manager/op_log.h"
#include "manager/stream_event.h"
#include "device/device_spec.h"
#include "runner/suite.h"
#include "runner/suite_table.h"

namespace crossdev::conformance {
namespace {

using namespace crossdev::manager;

struct Check {
  const char* name;
  std::vector<std::string> required;
  std::vector<std::string> optional;
  // Fills r (status/message/details); may throw YamlError for bad values (caught at validate time).
  void (*run)(const Row& row, DeviceManager& manager, CaseResult& r, bool dry_run);
};

// ---- helpers ----------------------------------------------------------------------------

DeviceSpec device_key(const Row& row, const std::string& key) {
  DeviceSpec spec;
  std::string error;
  if (try_parse_device(row.str(key), spec, &error) != ParseStatus::Ok) row.fail(key, error);
  if (spec.cpu_override) row.fail(key, "'cpu:-1' is a request, not a device");
  return canonical_device(spec);
}

c10::ScalarType dtype_value(const Row& row, const std::string& key, const std::string& text) {
  const auto d = dtype_from_name(text);
  if (!d) row.fail(key, "unknown dtype '" + text + "'; expected one of " + all_dtype_names());
  return *d;
}

void require_on_host(const Row& row, const std::string& key, const DeviceManager& m, const DeviceSpec& d) {
  try {
    m.require_present(d);
  } catch (const std::invalid_argument& e) {
    row.fail(key, e.what());
  }
}

void expect_equal(CaseResult& r, const std::string& what, const std::string& expected, const std::string& actual) {
  r.details.emplace_back(what + ".expected", expected);
  r.details.emplace_back(what + ".actual", actual);
  if (expected != actual && r.status == Status::Pass) {
    r.status = Status::Fail;
    r.message = what + ": expected '" + expected + "', got '" + actual + "'";
  }
}

Execution execution_of(const DeviceManager& m, const DeviceSpec& d) {
  return m.is_simulated(d) ? Execution::Simulated : Execution::Real;
}

// ---- checks -----------------------------------------------------------------------------

void run_capability(const Row& row, DeviceManager& m, CaseResult& r, bool dry) {
  const DeviceSpec device = device_key(row, "device");
  require_on_host(row, "device", m, device);
  const std::string field = row.str("field");
  const std::string expect = row.str("expect");
  std::optional<c10::ScalarType> dtype;
  if (field.rfind("dtype:", 0) == 0) {
    dtype = dtype_value(row, "field", field.substr(6));
    if (expect != "supported" && expect != "unsupported") row.fail("expect", "dtype fields expect supported or unsupported");
  } else if (field != "compile" && field != "distributed" && field != "inference" && field != "low_precision") {
    row.fail("field", "unknown field '" + field + "'; expected dtype:<name>, compile, distributed, inference or low_precision");
  }
  if (dry) return;
  const Capabilities c = m.capabilities(device);
  r.execution = execution_of(m, device);
  std::string actual;
  if (dtype) actual = c.supports(*dtype) ? "supported" : "unsupported";
  else if (field == "compile") actual = c.compile_supported ? "supported" : "unsupported";
  else if (field == "distributed") actual = c.distributed_supported ? "supported" : "unsupported";
  else if (field == "inference") actual = inference_context_name(c.inference_context);
  else actual = dtype_name(c.low_precision);
  expect_equal(r, field, expect, actual);
}

void run_device_chain(const Row& row, DeviceManager& m, CaseResult& r, bool dry) {
  const DeviceSpec from = device_key(row, "from");
  require_on_host(row, "from", m, from);
  DeviceChain chain = DeviceChain::seed003();
  if (row.has("chain")) {
    try {
      chain = DeviceChain::parse(row.str("chain"));
    } catch (const std::invalid_argument& e) {
      row.fail("chain", e.what());
    }
  }
  std::vector<std::string> expect;
  for (const auto& d : row.str_list("expect", /*allow_null=*/true)) {
    if (d.empty()) continue;  // `expect: ~`: nowhere to go
    DeviceSpec spec;
    std::string error;
    if (try_parse_device(d, spec, &error) != ParseStatus::Ok) row.fail("expect", error);
    expect.push_back(canonical_device(spec).str());
  }
  if (dry) return;
  std::vector<std::string> walked;
  std::string reasons;
  DeviceSpec at = from;
  for (int guard = 0; guard < kNumDeviceKinds + 1; ++guard) {
    const ChainStep step = chain.next(at, m.host(), "row " + row.id());
    reasons += step.reason + "\n";
    if (step.to.same_device(at)) break;
    walked.push_back(step.to.str());
    at = step.to;
  }
  r.execution = Execution::Simulated;
  r.details.emplace_back("reasons", reasons);
  expect_equal(r, "walk", c10::Join(", ", expect), c10::Join(", ", walked));
}

void run_auto_detect(const Row& row, DeviceManager& m, CaseResult& r, bool dry) {
  const DeviceSpec expect = device_key(row, "expect");
  if (dry) return;
  const auto d = m.auto_detect();
  r.execution = execution_of(m, d.device);
  r.details.emplace_back("reason", d.reason);
  expect_equal(r, "device", expect.str(), d.device.str());
}

void run_ensure_device(const Row& row, DeviceManager& m, CaseResult& r, bool dry) {
  std::vector<DeviceSpec> on;
  for (const auto& d : row.str_list("inputs_on")) {
    DeviceSpec spec;
    std::string error;
    if (try_parse_device(d, spec, &error) != ParseStatus::Ok) row.fail("inputs_on", error);
    on.push_back(canonical_device(spec));
    require_on_host(row, "inputs_on", m, on.back());
  }
  std::optional<DeviceSpec> target;
  if (row.has("target")) {
    DeviceSpec spec;
    std::string error;
    if (try_parse_device(row.str("target"), spec, &error) != ParseStatus::Ok) row.fail("target", error);
    target = spec;  // may be "cpu:-1": the policy decides
  }
  const DeviceSpec expect = device_key(row, "expect");
  const long long expect_moves = row.integer("expect_moves");
  if (dry) return;
  std::vector<at::Tensor> tensors;
  for (std::size_t i = 0; i < on.size(); ++i) tensors.push_back(at::full({2, 2}, static_cast<double>(i + 1)));
  std::vector<Placed> placed = place_on(m, tensors, on);
  const std::size_t log_before = OpLog::global().size();
  const DeviceConsistency c = ensure_device(m, placed, target ? &*target : nullptr);
  r.execution = execution_of(m, c.target);
  std::string moves;
  for (const auto& mv : c.moves) moves += mv.from.str() + " -> " + mv.to.str() + ": " + mv.reason + "\n";
  r.details.emplace_back("moves", moves);
  expect_equal(r, "device", expect.str(), c.target.str());
  expect_equal(r, "moves", std::to_string(expect_moves), std::to_string(c.moves.size()));
  // Every tensor ends on the target (and keeps its values); every move was logged.
  for (std::size_t i = 0; i < placed.size(); ++i) {
    if (!placed[i].device.same_device(c.target)) expect_equal(r, "input " + std::to_string(i), c.target.str(), placed[i].device.str());
    if (placed[i].tensor.to(c10::kCPU).min().item<double>() != static_cast<double>(i + 1))
      expect_equal(r, "input " + std::to_string(i) + " values", "unchanged", "changed");
  }
  expect_equal(r, "logged moves", std::to_string(c.moves.size()), std::to_string(OpLog::global().size() - log_before));
}

void run_ensure_dtype(const Row& row, DeviceManager& m, CaseResult& r, bool dry) {
  const DeviceSpec device = device_key(row, "device");
  require_on_host(row, "device", m, device);
  std::vector<c10::ScalarType> dtypes, expect;
  for (const auto& d : row.str_list("dtypes")) dtypes.push_back(dtype_value(row, "dtypes", d));
  for (const auto& d : row.str_list("expect_dtypes")) expect.push_back(dtype_value(row, "expect_dtypes", d));
  if (expect.size() != dtypes.size()) row.fail("expect_dtypes", "expected one dtype per input");
  const long long expect_casts = row.integer("expect_casts");
  if (dry) return;
  std::vector<at::Tensor> tensors;
  for (auto d : dtypes) tensors.push_back(at::full({3}, 1.25, at::TensorOptions().dtype(d)));
  std::vector<Placed> placed = place_on(m, tensors, std::vector<DeviceSpec>(dtypes.size(), device));
  DtypeOptions options;
  options.unify = row.boolean_or("unify", false);
  const auto casts = ensure_dtype(m, placed, options);
  r.execution = execution_of(m, device);
  std::vector<std::string> got, want, reasons;
  for (const auto& p : placed) got.push_back(dtype_name(p.tensor.scalar_type()));
  for (auto d : expect) want.push_back(dtype_name(d));
  for (const auto& c : casts) reasons.push_back(std::string(dtype_name(c.from)) + "->" + dtype_name(c.to) + ": " + c.reason);
  r.details.emplace_back("casts", c10::Join(", ", reasons));
  expect_equal(r, "dtypes", c10::Join(", ", want), c10::Join(", ", got));
  expect_equal(r, "casts", std::to_string(expect_casts), std::to_string(casts.size()));
  for (const auto& c : casts)
    if (c.reason.empty()) expect_equal(r, "cast reason", "non-empty", "empty");
}

void run_memory_stats(const Row& row, DeviceManager& m, CaseResult& r, bool dry) {
  const DeviceSpec device = device_key(row, "device");
  require_on_host(row, "device", m, device);
  const std::string expect = row.str("expect");
  if (expect != "measured" && expect != "simulated") row.fail("expect", "expected measured or simulated");
  if (dry) return;
  r.execution = execution_of(m, device);
  const MemoryStats before = m.memory_stats(device);
  r.details.emplace_back("source", before.source);
  expect_equal(r, "kind", expect, before.simulated ? "simulated" : "measured");
  if (before.simulated) {
    // Nothing counted, nothing invented: only the masquerade's capacity is known.
    expect_equal(r, "allocated", "-1", std::to_string(before.allocated));
    expect_equal(r, "total", std::to_string(m.properties(device).total_memory), std::to_string(before.total));
    return;
  }
  // A live 64 MiB tensor must show up in `allocated` (the stats really measure something).
  constexpr long long kBytes = 64LL << 20;
  at::Tensor block = at::ones({kBytes / 4}, at::TensorOptions().dtype(at::kFloat).device(m.storage_device(device)));
  const MemoryStats during = m.memory_stats(device);
  block.reset();
  const MemoryStats after = m.memory_stats(device);
  r.metrics.emplace_back("allocated_delta_mib", static_cast<double>(during.allocated - before.allocated) / (1 << 20));
  if (during.allocated - before.allocated < kBytes)
    expect_equal(r, "allocated grows by the 64 MiB tensor", ">= " + std::to_string(kBytes),
                 std::to_string(during.allocated - before.allocated));
  if (during.allocated - after.allocated < kBytes / 2)
    expect_equal(r, "allocated falls when the tensor is freed", ">= 32 MiB", std::to_string(during.allocated - after.allocated));
  if (during.peak_allocated < kBytes) expect_equal(r, "peak_allocated", ">= 64 MiB", std::to_string(during.peak_allocated));
  if (during.total <= 0) expect_equal(r, "total", "> 0", std::to_string(during.total));
  if (during.reserved < during.allocated && device.kind != DeviceKind::CPU)
    expect_equal(r, "reserved >= allocated", "true", "false");
}

void run_empty_cache(const Row& row, DeviceManager& m, CaseResult& r, bool dry) {
  const DeviceSpec device = device_key(row, "device");
  require_on_host(row, "device", m, device);
  const std::string expect = row.str("expect");
  if (expect != "ok" && expect != "noop") row.fail("expect", "expected ok or noop");
  if (dry) return;
  r.execution = execution_of(m, device);
  const std::size_t before = OpLog::global().size();
  const EmptyCacheResult e = m.empty_cache(device);
  r.details.emplace_back("detail", e.detail);
  expect_equal(r, "outcome", expect, e.supported ? "ok" : "noop");
  const auto entries = OpLog::global().entries();
  const bool logged = entries.size() > before && entries.back().category == "empty_cache" && entries.back().device == device.str();
  expect_equal(r, "logged", "true", logged ? "true" : "false");
}

void run_properties(const Row& row, DeviceManager& m, CaseResult& r, bool dry) {
  const DeviceSpec device = device_key(row, "device");
  require_on_host(row, "device", m, device);
  const bool expect_sim = row.boolean("expect_simulated");
  if (dry) return;
  const UnifiedProperties p = m.properties(device);
  r.execution = execution_of(m, device);
  r.details.emplace_back("name", p.name);
  expect_equal(r, "simulated", expect_sim ? "true" : "false", p.simulated ? "true" : "false");
  if (row.has("expect_name") && p.name.find(row.str("expect_name")) == std::string::npos)
    expect_equal(r, "name contains", row.str("expect_name"), p.name);
  if (row.has("expect_major")) expect_equal(r, "major", std::to_string(row.integer("expect_major")), std::to_string(p.major));
  if (row.has("expect_minor")) expect_equal(r, "minor", std::to_string(row.integer("expect_minor")), std::to_string(p.minor));
  if (row.has("expect_mp"))
    expect_equal(r, "multiprocessor_count", std::to_string(row.integer("expect_mp")), std::to_string(p.multiprocessor_count));
  if (p.total_memory <= 0) expect_equal(r, "total_memory", "> 0", std::to_string(p.total_memory));
}

// Stream/event scenarios as data: each returns the observed value, or "error:<message>".
struct Scenario {
  const char* name;
  std::string (*run)(DeviceManager& m, const DeviceSpec& d);
};

template <class F>
std::string error_or(F f) {
  try {
    return f();
  } catch (const c10::Error& e) {
    return std::string("error:") + e.what_without_backtrace();
  }
}

const Scenario kScenarios[] = {
    {"query_unrecorded", [](DeviceManager& m, const DeviceSpec& d) {
       Event e(m, d);
       return std::string(e.query() ? "true" : "false");
     }},
    {"synchronize_unrecorded", [](DeviceManager& m, const DeviceSpec& d) {
       Event e(m, d);
       e.synchronize();  // returns at once, as on CUDA
       return std::string("returned");
     }},
    {"elapsed_unrecorded", [](DeviceManager& m, const DeviceSpec& d) {
       return error_or([&] {
         Event a(m, d, true), b(m, d, true);
         return std::to_string(a.elapsed_time(b));
       });
     }},
    {"elapsed_one_recorded", [](DeviceManager& m, const DeviceSpec& d) {
       return error_or([&] {
         Stream s(m, d);
         Event a(m, d, true), b(m, d, true);
         a.record(s);
         return std::to_string(a.elapsed_time(b));
       });
     }},
    {"elapsed_without_timing", [](DeviceManager& m, const DeviceSpec& d) {
       return error_or([&] {
         Stream s(m, d);
         Event a(m, d, false), b(m, d, false);
         a.record(s);
         b.record(s);
         return std::to_string(a.elapsed_time(b));
       });
     }},
    {"elapsed_covers_sleep", [](DeviceManager& m, const DeviceSpec& d) {
       // Not a speed target: a 20 ms host sleep between two recorded events must show in the
       // elapsed time (an emulation that returned 0 would fail). A device stamps an event when its
       // stream reaches it, up to a launch latency after the host's record call, and the first
       // record on a fresh stream can lag more than the second: an H100 measured 19.999 ms for
       // this sleep. So the sleep is covered when all but kStampLagAllowanceMs of it shows.
       constexpr double kSleepMs = 20.0;
       constexpr double kStampLagAllowanceMs = 1.0;
       Stream s(m, d);
       Event a(m, d, true), b(m, d, true);
       a.record(s);
       std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(kSleepMs));
       b.record(s);
       b.synchronize();
       const double elapsed = a.elapsed_time(b);
       return elapsed >= kSleepMs - kStampLagAllowanceMs ? std::string("covers_sleep")
                                                         : "short_of_sleep:" + std::to_string(elapsed);
     }},
    {"record_other_device", [](DeviceManager& m, const DeviceSpec& d) {
       return error_or([&] {
         Stream s(m, DeviceSpec::of(DeviceKind::CPU));
         Event e(m, d, false);
         e.record(s);
         return std::string("recorded");
       });
     }},
    {"stream_query_synchronize", [](DeviceManager& m, const DeviceSpec& d) {
       Stream s(m, d);
       s.synchronize();
       return std::string(s.query() ? "true" : "false");
     }},
};

void run_stream_event(const Row& row, DeviceManager& m, CaseResult& r, bool dry) {
  const DeviceSpec device = device_key(row, "device");
  require_on_host(row, "device", m, device);
  const std::string name = row.str("scenario");
  const Scenario* scenario = named::find(kScenarios, name);
  if (!scenario) row.fail("scenario", "unknown scenario '" + name + "'; expected one of " + named::names(kScenarios));
  if (dry) return;
  r.execution = execution_of(m, device);
  expect_equal(r, name, row.str("expect"), scenario->run(m, device));
  if (row.has("expect_emulated")) {
    const bool emulated = Stream(m, device).emulated();
    expect_equal(r, "emulated", row.boolean("expect_emulated") ? "true" : "false", emulated ? "true" : "false");
  }
}

void run_checkpoint(const Row& row, DeviceManager& m, CaseResult& r, bool dry) {
  HostProfile save_host;
  try {
    save_host = HostProfile::named_or_spec(row.str("save_host"));
  } catch (const std::exception&) {
    row.fail("save_host", "unknown host; expected one of " + std::string(named_host_list()));
  }
  DeviceManager saver(save_host);
  const DeviceSpec save_device = device_key(row, "save_device");
  require_on_host(row, "save_device", saver, save_device);
  MapLocation map;
  try {
    map = MapLocation::parse(row.str("map_location"));
  } catch (const std::exception& e) {
    row.fail("map_location", std::string(e.what()) + "; expected policy, cpu or a device");
  }
  const c10::ScalarType dtype = dtype_value(row, "dtype", row.str("dtype"));
  const DeviceSpec expect_device = device_key(row, "expect_device");
  const c10::ScalarType expect_dtype = dtype_value(row, "expect_dtype", row.str("expect_dtype"));
  if (dry) return;
  static std::atomic<int> counter{0};
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("crossdev_manager_ckpt_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".pt"))
                               .string();
  struct Remove {
    std::string p;
    ~Remove() { std::remove(p.c_str()); }
  } remove{path};
  auto gen = at::make_generator<at::CPUGeneratorImpl>(/*seed=*/4);
  const at::Tensor original = at::randn({5, 7}, gen, at::TensorOptions().dtype(dtype));
  std::vector<Placed> saved = place_on(saver, {original}, {save_device});
  save_checkpoint(path, {{"w", saved[0]}});
  const auto loaded = load_checkpoint(m, path, map);
  if (loaded.size() != 1) {
    r.status = Status::Fail;
    r.message = "expected 1 tensor back, got " + std::to_string(loaded.size());
    return;
  }
  const LoadedTensor& t = loaded[0];
  r.execution = m.is_simulated(t.value.device) || saver.is_simulated(save_device) ? Execution::Simulated : Execution::Real;
  r.details.emplace_back("placement", t.placement_reason);
  expect_equal(r, "saved_device", save_device.str(), t.saved_device.str());
  expect_equal(r, "device", expect_device.str(), t.value.device.str());
  expect_equal(r, "dtype", dtype_name(expect_dtype), dtype_name(t.value.tensor.scalar_type()));
  // Parity: same values, exactly when the dtype survived, within the narrower dtype's
  // assert_close tolerance when it was cast (every cast is listed).
  const at::Tensor got = t.value.tensor.to(c10::kCPU).to(at::kDouble);
  const at::Tensor want = original.to(at::kDouble);
  const bool exact = t.casts.empty();
  const bool close = exact ? at::equal(got, want) : at::allclose(got, want, 1.3e-6, 1e-5);
  expect_equal(r, exact ? "values (bitwise)" : "values (float32 tolerance)", "equal", close ? "equal" : "different");
  if (t.value.tensor.scalar_type() != dtype && t.casts.empty()) expect_equal(r, "cast logged", "yes", "no");
}

const std::vector<Check>& checks() {
  static const std::vector<Check> table = {
      {"capability", {"device", "field", "expect"}, {}, run_capability},
      {"device_chain", {"from", "expect"}, {"chain"}, run_device_chain},
      {"auto_detect", {"expect"}, {"policy"}, run_auto_detect},
      {"ensure_device", {"inputs_on", "expect", "expect_moves"}, {"target", "policy"}, run_ensure_device},
      {"ensure_dtype", {"device", "dtypes", "expect_dtypes", "expect_casts"}, {"unify"}, run_ensure_dtype},
      {"memory_stats", {"device", "expect"}, {}, run_memory_stats},
      {"empty_cache", {"device", "expect"}, {}, run_empty_cache},
      {"properties", {"device", "expect_simulated"}, {"expect_name", "expect_major", "expect_minor", "expect_mp"}, run_properties},
      {"stream_event", {"device", "scenario", "expect"}, {"expect_emulated"}, run_stream_event},
      {"checkpoint", {"save_host", "save_device", "map_location", "dtype", "expect_device", "expect_dtype"}, {}, run_checkpoint},
  };
  return table;
}

const Check& check_for(const Row& row) {
  const std::string name = row.str("check");
  for (const auto& c : checks()) {
    if (name != c.name) continue;
    for (const auto& key : c.required)
      if (!row.has(key)) row.fail(key, "missing (check " + name + " needs " + c10::Join(", ", c.required) + ")");
    for (const auto& key : row.keys()) {
      if (key == "id" || key == "source" || key == "intent" || key == "check" || key == "host") continue;
      const bool known = std::count(c.required.begin(), c.required.end(), key) + std::count(c.optional.begin(), c.optional.end(), key);
      if (!known) row.fail(key, "not a key of check " + name + " (takes " + c10::Join(", ", c.required) + (c.optional.empty() ? "" : ", " + c10::Join(", ", c.optional)) + ")");
    }
    return c;
  }
  row.fail("check", "unknown check '" + name + "'; expected one of " + named::names(checks()));
}

// host: this — the host the run is on (real probe plus --simulate kinds); rows whose device it
// lacks are skipped. Validation (no host yet) checks such rows against a host with every kind.
constexpr const char* kThisHost = "this";

DeviceManager manager_for(const Row& row, const HostProfile* this_host) {
  const std::string host = row.str_or("host", "cpu-only");
  HostProfile profile;
  try {
    if (host == kThisHost) profile = this_host ? *this_host : HostProfile::named_or_spec("all");
    else profile = HostProfile::named_or_spec(host);
  } catch (const std::exception&) {
    row.fail("host", "unknown host '" + host + "'; expected one of " + named_host_list() + ", or a simulate spec");
  }
  ManagerConfig config;
  if (row.has("policy")) {
    const Preset* preset = find_preset(row.str("policy"));
    if (!preset) row.fail("policy", "unknown policy preset '" + row.str("policy") + "'; expected one of " + preset_names());
    config.policy = preset;
    config.detect = preset;
  }
  return DeviceManager(std::move(profile), config);
}

class ManagerSuite final : public Suite {
 public:
  const char* name() const override { return "manager"; }
  const SuiteSchema& schema() const override {
    static const SuiteSchema s = [] {
      SuiteSchema out{{"check"}, {"host"}};
      for (const auto& c : checks()) {
        for (const auto& k : c.required) out.optional.push_back(k);
        for (const auto& k : c.optional) out.optional.push_back(k);
      }
      std::sort(out.optional.begin(), out.optional.end());
      out.optional.erase(std::unique(out.optional.begin(), out.optional.end()), out.optional.end());
      return out;
    }();
    return s;
  }
  void validate(const Row& row) const override {
    const Check& c = check_for(row);
    DeviceManager m = manager_for(row, nullptr);
    CaseResult scratch;
    c.run(row, m, scratch, /*dry_run=*/true);
  }
  std::vector<CaseResult> run(const Row& row, const RunContext& ctx) const override {
    const Check& c = check_for(row);
    DeviceManager m = manager_for(row, &ctx.host);
    CaseResult r = result_for(row, *this);
    r.device = m.host().source();
    // `host: this` rows measure the real device; a kind this run only simulates cannot answer them.
    if (row.str_or("host", "") == kThisHost && row.has("device")) {
      DeviceSpec spec;
      if (try_parse_device(row.str("device"), spec) == ParseStatus::Ok &&
          ctx.host.provenance(spec.kind) == Provenance::Simulated) {
        r.status = Status::Skip;
        r.execution = Execution::NotRun;
        r.message = std::string("needs a real ") + kind_name(spec.kind) + "; this run only simulates it";
        return {r};
      }
    }
    try {
      c.run(row, m, r, /*dry_run=*/false);
    } catch (const YamlError& e) {
      if (row.str_or("host", "") != kThisHost) throw;
      r.status = Status::Skip;  // this host lacks the row's device
      r.execution = Execution::NotRun;
      r.message = e.what();
    }
    return {r};
  }
};

}  // namespace

std::unique_ptr<Suite> make_manager_suite() { return std::make_unique<ManagerSuite>(); }

}  // namespace crossdev::conformance
