#!/usr/bin/env bash
# make test-stress: the whole test suite (`make test`: CTest + pytest) with a CPU hog on every
# core, to shake out timing-dependent tests. The hogs are killed on every exit path.
#   ci/stress.sh [make test arguments...]        e.g. ci/stress.sh BUILD=build
# STRESS_RUNS=n runs the suite n times in a row (default 1); the exit code is the first failure's.
set -u
cd "$(dirname "$0")/.."
cores=$(nproc 2>/dev/null || echo 2)
runs=${STRESS_RUNS:-1}
hogs=()
stop_hogs() {
  for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${hogs[@]}"; do wait "$pid" 2>/dev/null; done
  hogs=()
}
trap stop_hogs EXIT
trap 'stop_hogs; exit 130' INT
trap 'stop_hogs; exit 143' TERM
# Build first, unloaded: the stress is on the tests, not the compiler.
make --no-print-directory build "$@" || exit $?
for ((i = 0; i < cores; i++)); do
  yes > /dev/null &
  hogs+=($!)
done
echo "== stress: ${#hogs[@]} CPU hogs (yes > /dev/null) on $cores cores, $runs run(s) =="
rc=0
for ((run = 1; run <= runs; run++)); do
  start=$(date +%s)
  make --no-print-directory test "$@"
  r=$?
  echo "== stress run $run/$runs: exit $r after $(( $(date +%s) - start )) s =="
  [ "$r" -ne 0 ] && [ "$rc" -eq 0 ] && rc=$r
done
exit $rc
