// RedirectPolicy::resolve() benchmarks: the foundation's target is a decision in under 100 ns
// with zero heap allocations on the hot path. `allocs_per_op` counts global operator new calls
// inside the timed loop (alloc_counter.h), so a regression that allocates shows up as a number,
// not a guess. The host is a profile (data): resolve() depends only on it, the request and the state.
#include <benchmark/benchmark.h>

#include "alloc_counter.h"
#include "cases/registration.h"
#include "policy/redirect_policy.h"

namespace crossdev::bench {
namespace {

void run_resolve_case(benchmark::State& state, const ResolveRow& row, const HostProfile& host) {
  const RedirectPolicy policy(*row.preset);
  // Independent of TORCH_ALLOW_REDIRECTS in the bench's environment: the preset's default.
  const PolicyState initial = PolicyState::for_preset(*row.preset, "");
  const DeviceSpec* request = row.request ? &*row.request : nullptr;
  Decision last;

  const std::uint64_t allocs_before = heap_allocations();
  for (auto _ : state) {
    PolicyState st = initial;
    if (row.include_parse) {
      DeviceSpec parsed;
      benchmark::DoNotOptimize(try_parse_device(row.request_text, parsed));
      last = policy.resolve(&parsed, host, st, row.via);
    } else {
      last = policy.resolve(request, host, st, row.via);
    }
    benchmark::DoNotOptimize(last);
  }
  const double allocs = static_cast<double>(heap_allocations() - allocs_before);

  state.counters["allocs_per_op"] = benchmark::Counter(allocs, benchmark::Counter::kAvgIterations);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  state.SetLabel(row.request_text + " -> " + last.resolved.str() + " (" + action_name(last.action) + ") on " +
                 row.host);
}

}  // namespace

void register_resolve_row(const ResolveRow& row, const RegistrationContext&) {
  const HostProfile host = HostProfile::named_or_spec(row.host);
  const std::string name = "policy/resolve/" + row.header.id;
  benchmark::RegisterBenchmark(name.c_str(), [row, host](benchmark::State& s) { run_resolve_case(s, row, host); })
      ->Unit(benchmark::kNanosecond);
}

}  // namespace crossdev::bench
