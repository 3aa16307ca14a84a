#!/usr/bin/env bash
# crossdev on a lent GPU machine, in one call of the device tool (offline: nothing can be fetched there).
#   ci/gpu/run.sh [all|build|test|report|peers]        (all: the four in that order, each bounded)
#   ci/gpu/run.sh smoke                                (build, then only the checks that failed on a GPU before)
#   ci/gpu/run.sh verdicts                             (build, then the float32 OpInfo sweep and the models on real cuda: bundles)
#   ci/gpu/run.sh diagnose|link-rules                  (where a crash comes from; see each function)
# The image's own python3 holds a CUDA torch; crossdev's wheel is built from $BUILD and installed into that
# interpreter's environment (make install VENV=<its prefix>), so `make test` and the report run the installed
# package as on any runner. Setup is skipped (CROSSDEV_SKIP_SETUP=1): what the image lacks is carried in
# .gpu-deps/ (ignored by git; name it in the device tool's `carry`), filled on the CPU machine with
#   (cd .gpu-deps/debs && apt-get download libgtest-dev libgmock-dev libbenchmark-dev libbenchmark1debian \
#      libyaml-cpp-dev libyaml-cpp0.7 libyaml-dev libyaml-0-2)
#   python3 -m pip download --no-deps --only-binary=:all: -d .gpu-deps/wheels expecttest==0.3.0 html5lib==1.1 webencodings==0.6.1
# The .debs (Debian bookworm builds; they run on the Ubuntu 24.04 image) are unpacked into /opt/deps, never into /.
# CROSSDEV_GPU_PRELOAD_STDCXX=1 runs the test, report and peers phases with libstdc++ preloaded (the
# workaround for builds from before cmake/CrossdevLinking.cmake's rules; docs/building.md, "Linking").
# GPU_DEADLINE_S bounds the whole run (default 560 s); each phase gets what is left, minus what the later
# phases are promised. Results go to $OUT: summary.txt, logs.tgz, report.tgz (bundle, HTML, junit),
# peers.tgz (the CUDA peers JSON and its summary); each is rewritten after every phase, so a cut run
# still brings back what finished.
set -uo pipefail
phase="${1:-all}"
FINAL_OUT="${OUT:-/tmp/out}"; mkdir -p "$FINAL_OUT"
W="${GPU_WORK:-/tmp/crossdev-gpu}"; mkdir -p "$W"
BUILD="${BUILD:-build-cuda}"
JOBS="${JOBS:-$(nproc)}"
DEADLINE="${GPU_DEADLINE_S:-560}"
T0=$SECONDS
export CROSSDEV_SKIP_SETUP=1 PYTHONUNBUFFERED=1
say() { echo "[$((SECONDS - T0))s] $*" | tee -a "$W/timeline.txt"; }
left() { echo $(( DEADLINE - (SECONDS - T0) )); }
bounded() {  # $1: the most seconds this phase may take, $2: seconds kept for the later phases; then the command
  local cap="$1" keep="$2"; shift 2
  local t=$(( $(left) - keep )); (( t > cap )) && t=$cap
  (( t < 10 )) && { say "skipped (no time left): $*"; return 124; }
  timeout --kill-after=5 "$t" "$@"
}

if compgen -G ".gpu-deps/debs/*.deb" > /dev/null; then
  mkdir -p /opt/deps && for deb in .gpu-deps/debs/*.deb; do dpkg -x "$deb" /opt/deps; done
  export LD_LIBRARY_PATH="/opt/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
if compgen -G ".gpu-deps/wheels/*.whl" > /dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /opt/site .gpu-deps/wheels/*.whl \
    > /dev/null 2>&1 && export PYTHONPATH="/opt/site${PYTHONPATH:+:$PYTHONPATH}"
fi
PREFIX="$(python3 -c 'import sys; print(sys.prefix)')"
MAKE=(make BUILD="$BUILD" PYTHON=python3 JOBS="$JOBS" VENV="$PREFIX" REPORT_DIR="$W/report"
      "CMAKE_ARGS=-DCMAKE_PREFIX_PATH=/opt/deps/usr -DCROSSDEV_CTEST_PER_CASE=ON")

preload_stdcxx() {  # CROSSDEV_GPU_PRELOAD_STDCXX=1: the phases after the build run with libstdc++ preloaded
  [[ "${CROSSDEV_GPU_PRELOAD_STDCXX:-0}" == 1 ]] || return 0
  local lib; lib="$(g++ -print-file-name=libstdc++.so.6)"
  [[ ":${LD_PRELOAD:-}:" == *":$lib:"* ]] && return 0
  export LD_PRELOAD="$lib${LD_PRELOAD:+:$LD_PRELOAD}"
  say "LD_PRELOAD=$LD_PRELOAD"
}

pack() {
  { cat "$W/machine.txt" 2>/dev/null; echo "== timeline"; cat "$W/timeline.txt"
    echo "== build"; grep -E "error|FAILED" "$W/build.log" 2>/dev/null | head -20; tail -3 "$W/build.log" 2>/dev/null
    echo "== test"; grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|\*\*\*Exception|SEGFAULT" "$BUILD/ctest.log" 2>/dev/null | tail -30
    grep -E "^(FAILED|ERROR) | (FAILED|ERROR) tests|[0-9]+ (passed|failed)" "$W/test.log" 2>/dev/null | tail -60
    echo "== report"; tail -15 "$W/report.log" 2>/dev/null; cat "$W/report/summary.md" 2>/dev/null
    echo "== peers"; tail -5 "$W/peers.log" 2>/dev/null; } > "$FINAL_OUT/summary.txt" 2>&1
  cp "$BUILD/ctest.log" "$W/" 2>/dev/null
  tar czf "$FINAL_OUT/logs.tgz" -C "$W" --ignore-failed-read timeline.txt machine.txt build.log test.log ctest.log report.log peers.log smoke.log diagnose.txt link_rules.txt link_rules_build.log 2>/dev/null
  [[ -d "$W/report" ]] && tar czf "$FINAL_OUT/report.tgz" -C "$W" report 2>/dev/null
  compgen -G "$W/peer_bench_cuda*" > /dev/null && tar czf "$FINAL_OUT/peers.tgz" -C "$W" $(cd "$W" && ls peer_bench_cuda*) 2>/dev/null
  return 0
}

run_build() {
  { nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
    python3 -c "import torch, sys; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0))"
    nvcc --version | tail -1; nproc; } > "$W/machine.txt" 2>&1
  bounded 300 330 "${MAKE[@]}" install > "$W/build.log" 2>&1
  local rc=$?
  say "build+install rc=$rc ($(grep -E 'CMAKE_CUDA_COMPILER:|^TORCH_CUDA_ARCH_LIST' "$BUILD/CMakeCache.txt" 2>/dev/null | tr '\n' ' '))"
  return $rc
}
run_test() {
  preload_stdcxx
  # One line per test as it ends (PYTEST_ADDOPTS -vv against make test's -q), so a run the bound cuts
  # still names what failed; the summary's short reasons (-rfE) when it finishes.
  PYTEST_ADDOPTS="-vv -rfE ${PYTEST_ADDOPTS:-}" bounded 330 60 "${MAKE[@]}" test > "$W/test.log" 2>&1
  local rc=$?
  say "make test rc=$rc; $(grep -E 'tests passed|tests failed' "$BUILD/ctest.log" | tail -1); $(grep -E '[0-9]+ (passed|failed)' "$W/test.log" | tail -1)"
  return $rc
}
run_report() {
  preload_stdcxx
  # The conformance part of make report: real cuda and cpu; the kinds this machine lacks simulated and labelled so.
  # The CPU benchmarks are the CPU runner's; the GPU's are the peers phase.
  export CROSSDEV_SKIP_BENCH=1
  bounded 150 70 bash ci/report.sh "$BUILD" "$W/report" python3 "mps,xpu,xla:1" > "$W/report.log" 2>&1
  local rc=$?
  say "report rc=$rc; $(grep -E 'passed|PASS|FAIL' "$W/report/summary.md" 2>/dev/null | head -3 | tr '\n' ' ')"
  return $rc
}
run_peers() {
  preload_stdcxx
  # Fused CUDA kernels against the ATen expression and Inductor, the size sweep, CUDA events (bench/python/peer_bench.py).
  bounded 200 5 python3 bench/python/peer_bench.py --device cuda --parts cases,sweep --build-dir "$BUILD" \
    --repetitions 3 --min-time 0.03 --compile-budget-seconds 45 --cache-dir "$BUILD/inductor-cache" \
    --out "$W/peer_bench_cuda.json" > "$W/peers.log" 2>&1
  local rc=$?
  [[ -f "$W/peer_bench_cuda.json" ]] && python3 bench/summarize.py "$W/peer_bench_cuda.json" \
    --markdown "$W/peer_bench_cuda_summary.md" >> "$W/peers.log" 2>&1
  say "peers rc=$rc"
  return $rc
}

run_verdicts() {
  # Issue 39's acceptance data on a real accelerator: the float32 OpInfo sweep and the example models on the real
  # cuda against the CPU (nothing simulated), each bundle unedited and gzipped into $OUT.
  preload_stdcxx
  bounded 240 150 python3 -m crossdev run --quiet --matrix matrices/opinfo/opinfo_sweep.yaml --out "$W/opinfo.json" \
    > "$W/verdicts.log" 2>&1
  say "opinfo sweep rc=$? $(tail -2 "$W/verdicts.log" | tr '\n' ' ')"
  bounded 200 5 python3 -m crossdev run --quiet --matrix matrices/models --import examples/models --out "$W/models.json" \
    >> "$W/verdicts.log" 2>&1
  say "models rc=$? $(tail -2 "$W/verdicts.log" | tr '\n' ' ')"
  for b in opinfo models; do [[ -f "$W/$b.json" ]] && gzip -c "$W/$b.json" > "$FINAL_OUT/$b.json.gz"; done
  cp "$W/verdicts.log" "$FINAL_OUT/" 2>/dev/null
  return 0
}

run_diagnose() {
  # Where the crashes of a pytest run come from: each crashing call alone, then again with libstdc++
  # preloaded (first in the lookup scope, so no other library's copy of a libstdc++ function stands in
  # for libstdc++'s own); the dynamic linker's bindings of crossdev's libraries to torch's; the crashing
  # test files with the preload; host backtraces under cuda-gdb.
  local stdcxx; stdcxx="$(g++ -print-file-name=libstdc++.so.6)"
  local snippets=(
    "crossdev.manager.classify('CUDA out of memory. Tried to allocate 2 GiB', 'RuntimeError')"
    "crossdev.manager.DeviceManager('mps').capabilities('mps')"
    "torch.ops.crossdev.modulate(torch.randn(2, 3), torch.randn(2, 3), torch.randn(2, 3))"
    "torch.ops.crossdev.bias_dropout_add_scale(torch.ones(4, 8), p=1.5, training=True)")
  : > "$W/diagnose.txt"
  for s in "${snippets[@]}"; do
    local code="import torch, crossdev; crossdev.load()
try:
    print('returned', $s)
except Exception as e:
    print('raised', type(e).__name__, str(e)[:200])"
    for pre in "" "$stdcxx"; do
      echo "=== ${pre:+LD_PRELOAD=$pre }$s" >> "$W/diagnose.txt"
      bounded 30 40 env ${pre:+LD_PRELOAD=$pre} python3 -X faulthandler -c "$code" 2>&1 | tail -4 >> "$W/diagnose.txt"
      echo "rc=${PIPESTATUS[0]}" >> "$W/diagnose.txt"
    done
  done
  say "diagnose: snippets done"
  echo "=== bindings of crossdev's libraries to torch's (LD_DEBUG=bindings)" >> "$W/diagnose.txt"
  LD_DEBUG=bindings LD_DEBUG_OUTPUT="$W/bindings" bounded 30 40 python3 -c "import torch, crossdev; crossdev.load(); ${snippets[0]}" > /dev/null 2>&1
  cat "$W"/bindings.* 2>/dev/null | grep -E "binding file [^ ]*crossdev[^ ]* .* to [^ ]*/torch/lib/" \
    | grep -E "_ZNSt|_ZNKSt|_ZSt|_ZTISt|_ZTVSt" | sed -E 's/^ *[0-9]+: *//' | sort -u | head -60 >> "$W/diagnose.txt"
  rm -f "$W"/bindings.*
  echo "=== the crashing files, libstdc++ preloaded" >> "$W/diagnose.txt"
  ( cd tests/python && LD_PRELOAD="$stdcxx" CROSSDEV_BUILD_DIR="$PWD/../../$BUILD" bounded 60 40 python3 -m pytest -q \
      -p no:cacheprovider -n 8 --dist load manager/test_manager_errors.py manager/test_manager_api.py ops/test_ops_out_and_errors.py \
      ops/test_dropout_generator.py 2>&1 | grep -E "^(FAILED|ERROR)|passed|failed|node down" | tail -30 ) >> "$W/diagnose.txt"
  say "diagnose: pytest with the preload done"
  echo "=== cuda-gdb backtraces" >> "$W/diagnose.txt"
  for s in "${snippets[0]}" "${snippets[2]}"; do
    echo "--- $s" >> "$W/diagnose.txt"
    bounded 40 3 cuda-gdb -q -batch -ex run -ex bt --args python3 -c "import torch, crossdev; crossdev.load(); $s" 2>&1 \
      | grep -E "^#|signal|SIG|exited" | head -30 >> "$W/diagnose.txt"
  done
  say "diagnose done"
}

run_smoke() {
  # The checks that failed on a GPU host before (docs/history.md, docs/benchmarks.md), after a build: the error
  # classifier's gtest cases; the Python files whose calls crashed, the binding checks, and the files that
  # registered sim beside the real cuda; one line per test. Minutes, where `all` takes the whole deadline.
  preload_stdcxx
  bounded 60 20 ctest --test-dir "$BUILD" -R "ErrorClassifier|DeviceSafe|MatrixLoader" -j "$JOBS" --output-on-failure \
    > "$W/smoke.log" 2>&1
  say "smoke ctest rc=$?; $(grep -E 'tests passed|tests failed' "$W/smoke.log" | tail -1)"
  ( cd tests/python && CROSSDEV_BUILD_DIR="$PWD/../../$BUILD" bounded 200 5 python3 -m pytest -vv -rfE \
      -p no:cacheprovider -n "$JOBS" --dist loadfile manager/test_manager_errors.py manager/test_manager_api.py ops/test_ops_out_and_errors.py \
      ops/test_dropout_generator.py packaging/test_library_binding.py sim/test_sim_registration_sites.py ops/test_double_backward.py \
      ops/test_opcheck.py ) >> "$W/smoke.log" 2>&1
  local rc=$?
  say "smoke pytest rc=$rc; $(grep -E '[0-9]+ (passed|failed)' "$W/smoke.log" | tail -1)"
  grep -E " (FAILED|ERROR) |^(FAILED|ERROR) " "$W/smoke.log" | cut -c1-300 | head -40 > "$FINAL_OUT/smoke_failures.txt"
  return $rc
}

run_link_rules() {
  # Which of cmake/CrossdevLinking.cmake's rules a host's crash depends on: one CPU-flavour build (the crashes
  # are in host code), relinked for each subset of CROSSDEV_LINK_RULES (only the link steps rerun), each run
  # from the build tree: the error classifier's gtest cases and the diagnose phase's crashing calls.
  local b="$W/link-rules" out="$W/link_rules.txt"
  local snippets=(
    "crossdev.manager.classify('CUDA out of memory. Tried to allocate 2 GiB', 'RuntimeError')"
    "torch.ops.crossdev.modulate(torch.randn(2, 3), torch.randn(2, 3), torch.randn(2, 3))"
    "torch.ops.crossdev.bias_dropout_add_scale(torch.ones(4, 8), p=1.5, training=True)")
  : > "$out"
  for rules in "stdcxx_first;std_local;symbolic_functions" "stdcxx_first;symbolic_functions" \
               "std_local;symbolic_functions" "symbolic_functions"; do
    cmake -S . -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCROSSDEV_ENABLE_CUDA=OFF -DCROSSDEV_BUILD_TESTS=ON \
      -DCROSSDEV_PYTHON_EXECUTABLE=python3 -DCMAKE_PREFIX_PATH=/opt/deps/usr "-DCROSSDEV_LINK_RULES=$rules" \
      >> "$W/link_rules_build.log" 2>&1
    bounded 200 15 cmake --build "$b" -j "$JOBS" --target crossdev_manager_tests crossdev_python \
      crossdev_python_files >> "$W/link_rules_build.log" 2>&1
    echo "=== rules: $rules (build rc=$?)" >> "$out"
    bounded 20 15 "$b/bin/crossdev_manager_tests" --gtest_filter='ErrorClassifier.*' 2>&1 \
      | grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|free\(\)|Abort|Segmentation" | head -6 >> "$out"
    echo "gtest rc=${PIPESTATUS[0]}" >> "$out"
    for s in "${snippets[@]}"; do
      bounded 20 15 env PYTHONPATH="$b/python" python3 -X faulthandler -c "import torch, crossdev; crossdev.load()
try:
    print('returned', type($s).__name__)
except Exception as e:
    print('raised', type(e).__name__)" 2>&1 | grep -E "^(returned|raised)|Fatal Python error" | head -2 | sed "s|^|  ${s:0:40}: |" >> "$out"
    done
    say "link rules $rules done"
    if [[ "$rules" == "stdcxx_first;std_local;symbolic_functions" ]]; then
      echo "--- cuda-gdb, ErrorClassifier.FirstMatchWins" >> "$out"
      bounded 40 15 cuda-gdb -q -batch -ex run -ex bt --args "$b/bin/crossdev_manager_tests" \
        --gtest_filter=ErrorClassifier.FirstMatchWins 2>&1 | grep -E "^#" | cut -c1-220 | head -25 >> "$out"
      echo "--- libstdc++ and crossdev bound to a copy of std:: code outside libstdc++ (LD_DEBUG=bindings)" >> "$out"
      LD_DEBUG=bindings LD_DEBUG_OUTPUT="$W/lrb" bounded 20 15 "$b/bin/crossdev_manager_tests" \
        --gtest_filter=ErrorClassifier.FirstMatchWins > /dev/null 2>&1
      cat "$W"/lrb.* 2>/dev/null | grep -E "binding file [^ ]*(libstdc|crossdev)[^ ]* " | grep -vE " to [^ ]*libstdc\+\+" \
        | grep -E "_ZNSt|_ZNKSt|_ZSt|_ZTISt|_ZTVSt|_ZTVN|_ZTIN" | sed -E 's/^ *[0-9]+:\s*binding file //; s#/[^ ]*/##g' \
        | awk '$1 != $4' | sort -u | cut -c1-200 | head -80 >> "$out"
      rm -f "$W"/lrb.*
    fi
  done
}

case "$phase" in
  build) run_build ;;
  test) run_test ;;
  report) run_report ;;
  peers) run_peers ;;
  diagnose) run_diagnose ;;
  link-rules) run_link_rules ;;
  smoke) run_build && run_smoke ;;
  verdicts) run_build && run_verdicts ;;
  all) run_build && { run_test; pack; run_report; pack; run_peers; } ;;
  *) echo "usage: ci/gpu/run.sh [all|build|test|report|peers|smoke|verdicts|diagnose|link-rules]" >&2; exit 2 ;;
esac
rc=$?
pack
say "done (phase $phase rc=$rc)"
exit $rc
