#!/usr/bin/env bash
# make report: run the conformance matrices (and the bounded benchmark pass once the bench
# binary exists) on this host, then render the bundle to HTML. The bundle and HTML are always
# written; the exit code is the conformance verdict (0 pass, 1 failure, 2 bad input).
# $3 is the Python of the venv crossdev is installed in (make install): the matrices run through the
# installed `crossdev run` and `crossdev report`, as a user's runner would run them.
set -uo pipefail
build="${1:-build}"; out="${2:-reports/out}"; python="${3:-python3}"; simulate="${4:-}"
mkdir -p "$out"
sim_args=()
[[ -n "$simulate" ]] && sim_args=(--simulate "$simulate")
# The divergence switch (docs/sim-backend.md, "Diverging from the CPU"): each simulated kind differs from the
# CPU wherever a real device of that kind may (its own random stream, factor signs, TF32 under PyTorch's flags,
# CUDA's batch-norm statistics, reduction order). On unless the caller set CROSSDEV_SIM_DIVERGE (0: off).
export CROSSDEV_SIM_DIVERGE="${CROSSDEV_SIM_DIVERGE-all}"

bench_args=()
input_rc=0  # 2 when a step found bad input or a missing package; the conformance verdict is kept otherwise
# The peers driver (bench/python/peer_bench.py): fused (kernel-only .out and allocating), fallback,
# the ATen expression and torch.compile, timed in one process with the same-run STREAM triad.
# CROSSDEV_BENCH_ALLOCATOR: system (default) | tcmalloc | both (tcmalloc through LD_PRELOAD, Debian
# libtcmalloc-minimal4); the system run is the one merged into the bundle, a tcmalloc run gets its own
# peer_bench_tcmalloc.json and bench_summary_tcmalloc.md. CROSSDEV_BENCH_COMPILE=0 leaves torch.compile
# out; its compilations are cached in $build/inductor-cache and bounded by CROSSDEV_COMPILE_BUDGET_S.
# CROSSDEV_BENCH_PARTS (default cases,sweep,per_call): the bench matrix's cases, the size sweep (1K to 8M,
# matrices/bench/sweep.yaml, its own repetitions) and the per-call figure (one thread, [2, 8, 64]).
# CROSSDEV_BENCH_LOAD_LIBRARY: ':'-separated libraries the peers driver loads before it times anything (its
# --load-library): a kernel library registered over crossdev's ops, such as the slowed rms_norm that proves
# `crossdev report --baseline` flags a slowed op (docs/benchmarks.md, "Two make-report bundles").
run_peers() {  # $1: system|tcmalloc, $2: output JSON, then extra driver arguments
  local allocator="$1" json="$2"; shift 2
  local preload=()
  if [[ "$allocator" == tcmalloc ]]; then
    local lib
    lib="$("$python" -c 'import sys; sys.path.insert(0, "bench/python"); import host_config; print(host_config.find_tcmalloc() or "")')"
    if [[ -z "$lib" ]]; then
      echo "tcmalloc requested but libtcmalloc_minimal.so.4 is not installed (Debian libtcmalloc-minimal4)" >&2
      return 2
    fi
    preload=(env "LD_PRELOAD=$lib${LD_PRELOAD:+:$LD_PRELOAD}")
  fi
  local compile=(--cache-dir "$build/inductor-cache" --compile-budget-seconds "${CROSSDEV_COMPILE_BUDGET_S:-900}")
  [[ "${CROSSDEV_BENCH_COMPILE:-1}" == 0 ]] && compile=(--no-compile)
  "${preload[@]}" "$python" bench/python/peer_bench.py --build-dir "$build" --out "$json" \
    --repetitions "${CROSSDEV_BENCH_REPETITIONS:-5}" --min-time "${CROSSDEV_BENCH_MIN_TIME:-0.1}" "${compile[@]}" \
    --parts "${CROSSDEV_BENCH_PARTS:-cases,sweep,per_call}" \
    ${CROSSDEV_BENCH_LOAD_LIBRARY:+--load-library "$CROSSDEV_BENCH_LOAD_LIBRARY"} "$@"
}

if [[ -x "$build/bin/crossdev_bench" && "${CROSSDEV_SKIP_BENCH:-0}" != 1 ]]; then
  echo "== benchmarks (bounded pass) =="
  allocator="${CROSSDEV_BENCH_ALLOCATOR:-system}"
  case "$allocator" in system|tcmalloc|both) ;; *)
    echo "CROSSDEV_BENCH_ALLOCATOR=$allocator: expected system, tcmalloc or both" >&2; exit 2;; esac
  # The CPU fused/fallback op cases are the peers driver's (same process as the ATen and compile peers);
  # crossdev_bench keeps TorchScript, other devices, resolve() and its own triad.
  # The console gets one line per driver; each one's table (and Google Benchmark's context) is in its .txt
  # beside the JSON, shown here only when the driver failed.
  if "$build/bin/crossdev_bench" --benchmark_min_time=0.05s --benchmark_repetitions=3 --benchmark_out="$out/bench.json.tmp" \
       --benchmark_out_format=json --benchmark_filter='-^[a-z_]+/(fused|fallback)/[^/]+/[^/]+/cpu/' \
       ${CROSSDEV_BENCH_ARGS:-} > "$out/bench.txt" 2>&1; then
    echo "$(grep -m1 '^crossdev_bench:' "$out/bench.txt"); table: $out/bench.txt"
    if [[ "$allocator" != tcmalloc ]]; then
      run_peers system "$out/peer_bench.json" --merge-into "$out/bench.json.tmp" > "$out/peer_bench.txt" 2>&1
      peers_rc=$?
      ((peers_rc)) && tail -n 20 "$out/peer_bench.txt" >&2  # what went wrong, where it can be acted on
      echo "$(grep -m1 '^peer_bench.py: [0-9]* entries' "$out/peer_bench.txt"); table: $out/peer_bench.txt"
      # exit 2 (bad input, or a package make report should have installed) is the run's verdict too, after the rest ran
      ((peers_rc == 2)) && input_rc=2
      ((peers_rc)) && echo "the peers driver failed (rc=$peers_rc, see above); the report goes on with what it wrote" >&2
    fi
    if [[ "$allocator" != system ]]; then
      tc_json="$out/peer_bench_tcmalloc.json"
      [[ "$allocator" == tcmalloc ]] && tc_json="$out/peer_bench.json"
      merge=(); [[ "$allocator" == tcmalloc ]] && merge=(--merge-into "$out/bench.json.tmp")
      run_peers tcmalloc "$tc_json" "${merge[@]}" > "${tc_json%.json}.txt" 2>&1 || \
        { tail -n 20 "${tc_json%.json}.txt" >&2; echo "the tcmalloc peers run failed" >&2; }
      [[ "$allocator" == both && -f "$tc_json" ]] && \
        "$python" bench/summarize.py "$tc_json" --markdown "$out/bench_summary_tcmalloc.md" > /dev/null || true
    fi
    # The OpInfo sweep's figures (issue 24): wall time, overhead over a bare torch loop, peak RSS, on one
    # simulated kind (bench/python/opinfo_sweep_bench.py; several minutes). CROSSDEV_BENCH_OPINFO=0 leaves it out.
    if [[ "${CROSSDEV_BENCH_OPINFO:-1}" != 0 ]]; then
      "$python" bench/python/opinfo_sweep_bench.py --python "$python" --out "$out/opinfo_sweep_bench.json" \
        --merge-into "$out/bench.json.tmp" || echo "the OpInfo sweep benchmark failed (see above)" >&2
    fi
    mv "$out/bench.json.tmp" "$out/bench.json"
    bench_args=(--bench-json "$out/bench.json")
    "$python" bench/summarize.py "$out/bench.json" --markdown "$out/bench_summary.md" --json "$out/bench_summary.json" \
      > /dev/null || true
  else
    tail -n 20 "$out/bench.txt" >&2
    echo "benchmarks failed (the end of $out/bench.txt above); the report goes on without them" >&2
  fi
fi

# The gate's power (docs/opinfo.md, "The gate's power"): each group of the mutant catalog
# (tests/mutants/aten/catalog.json) in one `crossdev run` with its mutant libraries loaded, 3 reruns under
# seeds 1..3, plus one clean run; $out/gate_power.json, shown in the report ("What this gate catches").
# Only where the mutants were built (make test builds them in $build/lib); CROSSDEV_BENCH_GATE_POWER=0 leaves
# it out. Before it, the random laws' false alarms and power (bench/python/random_false_alarm_bench.py: the
# CPU's kernels over clean reruns, each law's parameters 10% off; about 1.5 minutes), embedded in the same file
# (CROSSDEV_RANDOM_LAWS names another JSON of that bench instead).
report_args=()
rm -f "$out/gate_power.json"
if [[ "${CROSSDEV_SKIP_BENCH:-0}" != 1 && "${CROSSDEV_BENCH_GATE_POWER:-1}" != 0 ]] && \
   compgen -G "$build/lib/libcrossdev_test_aten_mutant_*.so" > /dev/null; then
  if [[ -z "${CROSSDEV_RANDOM_LAWS:-}" ]]; then
    echo "== the random laws' power (random_false_alarm_bench.py) =="
    "$python" bench/python/random_false_alarm_bench.py --out "$out/random_laws.json" > "$out/random_laws.txt" \
      || echo "the random laws' benchmark failed (see $out/random_laws.txt)" >&2
  fi
  echo "== the gate's power (mutant catalog) =="
  "$python" bench/python/gate_power_bench.py --build-dir "$build" --crossdev "$(printf '%q' "$python") -m crossdev" \
    --out "$out/gate_power.json" --random-laws "${CROSSDEV_RANDOM_LAWS:-$out/random_laws.json}" \
    || echo "the gate's power benchmark failed (see above); the report goes on with what it wrote" >&2
  [[ -f "$out/gate_power.json" ]] && report_args+=(--gate-power "$out/gate_power.json")
fi

echo "== conformance =="
# The catalog, plus the example models (matrices/models, docs/models.md: their factories live in
# examples/models, which --import puts on the models worker's sys.path) and the OpInfo rows (matrices/opinfo,
# docs/opinfo.md: the sweep of every OpInfo on every simulated kind, the CPU-capability row, the smoke row,
# and any other row of that folder) in the same bundle. A sweep row runs for many minutes in one isolation
# worker, so the row timeout is raised (CROSSDEV_REPORT_ROW_TIMEOUT_S); a hanging case is still cut at its
# case_timeout.
# CROSSDEV_REPORT_FILTER: one glob over row ids (crossdev run --filter), for a bounded report (ci/fresh_report_check.sh).
# CROSSDEV_REPORT_SHARD: I/N, one shard of the opinfo rows (crossdev run --shard; the other suites run in shard 1).
filter_args=()
[[ -n "${CROSSDEV_REPORT_FILTER:-}" ]] && filter_args=(--filter "$CROSSDEV_REPORT_FILTER")
[[ -n "${CROSSDEV_REPORT_SHARD:-}" ]] && filter_args+=(--shard "$CROSSDEV_REPORT_SHARD")
# CROSSDEV_REPORT_MATRICES: the matrix folders (default: matrices matrices/models matrices/opinfo; make xla names
# matrices/xla instead of matrices/opinfo: the sweep bounded for a real XLA device, ci/xla_runner.sh).
matrix_args=()
for m in ${CROSSDEV_REPORT_MATRICES:-matrices matrices/models matrices/opinfo}; do matrix_args+=(--matrix "$m"); done
"$python" -m crossdev run "${matrix_args[@]}" --import examples/models \
  "${sim_args[@]}" "${filter_args[@]}" --quiet --row-timeout "${CROSSDEV_REPORT_ROW_TIMEOUT_S:-5400}" \
  --out "$out/bundle.json" --junit "$out/junit.xml" "${bench_args[@]}"
rc=$?
if [[ -f "$out/bundle.json" ]]; then
  echo "== report =="
  "$python" -m crossdev report "$out/bundle.json" --out "$out" "${report_args[@]}" || { echo "report rendering failed" >&2; [[ $rc == 0 ]] && rc=2; }
fi
((rc == 0 && input_rc == 2)) && { echo "make report: exit 2: a step above found bad input or a missing package" >&2; rc=2; }
exit $rc
