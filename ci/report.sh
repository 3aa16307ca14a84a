#!/usr/bin/env bash
# make report: run the conformance matrices (and the bounded benchmark pass once the bench
# binary exists) on this host, then render the bundle to HTML. The bundle and HTML are always
# written; the exit code is the conformance verdict (0 pass, 1 failure, 2 bad input).
set -uo pipefail
build="${1:-build}"; out="${2:-reports/out}"; python="${3:-python3}"; simulate="${4:-}"
mkdir -p "$out"
sim_args=()
[[ -n "$simulate" ]] && sim_args=(--simulate "$simulate")

bench_args=()
if [[ -x "$build/bin/crossdev_bench" && "${CROSSDEV_SKIP_BENCH:-0}" != 1 ]]; then
  echo "== benchmarks (bounded pass) =="
  if "$build/bin/crossdev_bench" --benchmark_min_time=0.05s --benchmark_out="$out/bench.json.tmp" \
       --benchmark_out_format=json ${CROSSDEV_BENCH_ARGS:-} > "$out/bench.txt"; then
    # Optional torch.compile peer (Inductor compiles each op: minutes): CROSSDEV_BENCH_COMPILE=1.
    if [[ "${CROSSDEV_BENCH_COMPILE:-0}" == 1 ]]; then
      "$python" bench/python/compile_bench.py --build-dir "$build" --bench-json "$out/bench.json.tmp" \
        --merge-into "$out/bench.json.tmp" --out "$out/compile_bench.json" --budget-seconds "${CROSSDEV_COMPILE_BUDGET_S:-300}" \
        || echo "torch.compile peer failed; the report goes on without it" >&2
    fi
    mv "$out/bench.json.tmp" "$out/bench.json"
    bench_args=(--bench-json "$out/bench.json")
    "$python" bench/summarize.py "$out/bench.json" --markdown "$out/bench_summary.md" || true
  else
    echo "benchmarks failed (see $out/bench.txt); the report goes on without them" >&2
  fi
fi

echo "== conformance =="
"$build/bin/crossdev" run --matrix matrices "${sim_args[@]}" --quiet \
  --out "$out/bundle.json" --junit "$out/junit.xml" "${bench_args[@]}"
rc=$?
if [[ -f "$out/bundle.json" ]]; then
  echo "== report =="
  "$python" reports/render.py "$out/bundle.json" --out "$out" || { echo "report rendering failed" >&2; [[ $rc == 0 ]] && rc=2; }
fi
exit $rc
