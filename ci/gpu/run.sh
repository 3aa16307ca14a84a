#!/usr/bin/env bash
# Runs crossdev on a lent GPU machine (offline: nothing can be installed from a registry there).
# Phases, so each fits one call of the device tool (the build dir survives while the machine
# stays warm):  build | ctest | pytest | report | all
# Uses the machine's own PyTorch (python3) and the CUDA toolkit at /usr/local/cuda. Results go to
# $OUT (logs, the bundle, the rendered report). Pure-Python wheels the image lacks are carried in
# .gpu-deps/wheels (pip download'ed on the CPU machine).
set -uo pipefail
phase="${1:-all}"
FINAL_OUT="${OUT:-/tmp/out}"; mkdir -p "$FINAL_OUT"
# Logs go to a work folder; `collect` copies the few files the device tool brings back (8 at most).
OUT="${GPU_WORK:-/tmp/crossdev-gpu}"; mkdir -p "$OUT"; export GPU_WORK="$OUT"
BUILD="${BUILD:-build-cuda}"
JOBS="${JOBS:-$(nproc)}"
export CROSSDEV_SKIP_SETUP=1 OMP_NUM_THREADS="${OMP_NUM_THREADS:-8}"
# Carried in .gpu-deps/ (ignored by git; name it in the device tool's `carry`), filled on the CPU machine with
#   (cd .gpu-deps/debs && apt-get download libgtest-dev libgmock-dev libbenchmark-dev libbenchmark1debian \
#      libyaml-cpp-dev libyaml-cpp0.7 libyaml-dev libyaml-0-2)
#   python3 -m pip download --no-deps --only-binary=:all: -d .gpu-deps/wheels expecttest==0.3.0 html5lib==1.1 webencodings==0.6.1
# The .debs (Debian bookworm builds; they ran on the Ubuntu 24.04 image) are unpacked into /opt/deps, never into /.
[[ -d .gpu-deps/wheels ]] && python3 -m pip install -q --no-index --no-deps .gpu-deps/wheels/*.whl >/dev/null 2>&1
if compgen -G ".gpu-deps/debs/*.deb" > /dev/null; then
  mkdir -p /opt/deps && for deb in .gpu-deps/debs/*.deb; do dpkg -x "$deb" /opt/deps; done
  export CMAKE_PREFIX_PATH="/opt/deps/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export LD_LIBRARY_PATH="/opt/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

run_build() {
  local tp; tp=$(python3 -c "import torch;print(torch.utils.cmake_prefix_path)")
  { nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
    python3 -c "import torch;print('torch', torch.__version__, 'cuda', torch.version.cuda)"; } > "$OUT/machine.txt" 2>&1
  ( time cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCROSSDEV_PYTHON_EXECUTABLE=python3 \
      -DCMAKE_PREFIX_PATH="$tp${CMAKE_PREFIX_PATH:+;${CMAKE_PREFIX_PATH//:/;}}" -DCROSSDEV_ENABLE_CUDA=ON ${CMAKE_ARGS:-} ) > "$OUT/configure.log" 2>&1 || { tail -40 "$OUT/configure.log"; return 2; }
  ( time cmake --build "$BUILD" -j "$JOBS" ) > "$OUT/build.log" 2>&1
  local rc=$?
  grep -E "error|FAILED" "$OUT/build.log" | head -40; tail -4 "$OUT/build.log"
  return $rc
}
run_diagnose() {
  # A backtrace of a test that crashed here before (cuda-gdb debugs host code too).
  timeout 60 cuda-gdb -batch -ex run -ex bt --args "$BUILD/bin/crossdev_parity_tests" \
    --gtest_filter='BadRows/OpsSuiteRejects.WithFileLineAndExpectation/unknown_dtype' > "$OUT/diagnose.txt" 2>&1
  grep -E "^#|SIG|PASSED|FAILED" "$OUT/diagnose.txt" | head -25
}
run_ctest() {
  ( time ctest --test-dir "$BUILD" -j "$JOBS" --output-on-failure --timeout 900 ) > "$OUT/ctest.log" 2>&1
  local rc=$?
  grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Total Test time" "$OUT/ctest.log" | tail -30
  return $rc
}
run_pytest() {
  ( time PYTHONPATH="$PWD/$BUILD/python" CROSSDEV_BUILD_DIR="$PWD/$BUILD" python3 -m pytest conformance -q -p no:cacheprovider -n 14 --dist load 2>/dev/null \
      || PYTHONPATH="$PWD/$BUILD/python" CROSSDEV_BUILD_DIR="$PWD/$BUILD" python3 -m pytest conformance -q -p no:cacheprovider ) > "$OUT/pytest.log" 2>&1
  local rc=$?
  grep -E "passed|failed|FAILED|ERROR" "$OUT/pytest.log" | tail -30
  return $rc
}
run_report() {
  # Real cuda (and cpu); the kinds this machine lacks are simulated and labelled so.
  # No venv on the GPU host: the build tree's package (build/python) is the crossdev `python3 -m crossdev` runs.
  PYTHONPATH="$PWD/$BUILD/python${PYTHONPATH:+:$PYTHONPATH}" CROSSDEV_BENCH_COMPILE="${CROSSDEV_BENCH_COMPILE:-1}" bash ci/report.sh "$BUILD" "$OUT/report" python3 "mps,xpu,xla:1" \
    > "$OUT/report.log" 2>&1
  local rc=$?
  tail -25 "$OUT/report.log"
  return $rc
}
collect() {
  { cat "$OUT/machine.txt"; tail -5 "$OUT/configure.log"; tail -4 "$OUT/build.log"
    echo "== diagnose"; grep -E "^#|SIG|PASSED|FAILED" "$OUT/diagnose.txt" | head -30
    echo "== ctest"; grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|\*\*\*|Total Test time" "$OUT/ctest.log" | tail -40
    echo "== pytest"; tail -30 "$OUT/pytest.log"
    echo "== report"; tail -40 "$OUT/report.log"; } > "$FINAL_OUT/summary.txt" 2>&1
  cp "$OUT/ctest.log" "$FINAL_OUT/" 2>/dev/null
  for f in bundle.json bench.json peer_bench.json index.html junit.xml bench_summary.md; do
    cp "$OUT/report/$f" "$FINAL_OUT/" 2>/dev/null
  done
}
case "$phase" in
  build) run_build ;;
  ctest) run_ctest ;;
  pytest) run_pytest ;;
  report) run_report ;;
  all) run_build && { run_diagnose; timeout 110 bash "$0" ctest; CROSSDEV_COMPILE_BUDGET_S=120 timeout 270 bash "$0" report;
                     timeout "${PYTEST_BUDGET_S:-40}" bash "$0" pytest; }; collect ;;
  collect) collect ;;
  diagnose) run_diagnose ;;
  *) echo "usage: ci/gpu/run.sh build|ctest|pytest|report|diagnose|collect|all" >&2; exit 2 ;;
esac
