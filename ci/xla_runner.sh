#!/usr/bin/env bash
# make xla: crossdev on torch_xla's real xla device, on any Linux host (docs/xla.md).
#   1. a venv with the torch and torch-xla pinned in pyproject.toml's [tool.crossdev] xla-runtime (PyPI's
#      torch 2.9.0 is a CUDA build, ~4 GB with its nvidia packages), kept under the cache and reused while
#      its versions match: downloaded once per machine, never at run time;
#   2. crossdev built against that torch (no tests, no benchmarks), in a build dir inside the clone (build-xla/),
#      with ccache under the cache keyed on paths relative to the clone (a new clone hits the cache);
#   3. PJRT_DEVICE=CPU (unless set): the catalog with seed 001's claims (matrices/claims.yaml), the models and
#      the OpInfo sweep bounded for XLA (matrices/xla/) with xla a REAL device, nothing simulated, into
#      reports/xla/ (bundle, JUnit, HTML; repro/: the `crossdev repro` script of every wrong result, each
#      checked to exit 1 on xla and 0 on the CPU); with reports/out/bundle.json from make report there,
#      reports/merged/ shows both runners.
# Exit: the conformance verdict of step 3 (0 pass, 1 failure, 2 bad input or a setup step that failed).
# Environment: CROSSDEV_CACHE_DIR (default ${XDG_CACHE_HOME:-$HOME/.cache}/crossdev), JOBS, PYTHON (creates
#   the venv; default python3), CROSSDEV_SKIP_SETUP=1 (install nothing: the venv must be there),
#   CROSSDEV_XLA_OUT (default reports/xla), CROSSDEV_XLA_FILTER (one glob over row ids, crossdev run --filter),
#   CROSSDEV_XLA_SHARD (I/N: one shard of the OpInfo sweep's ops, crossdev run --shard; .ci/run's bound).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
PYTHON="${PYTHON:-python3}"
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 2)}"
cache="${CROSSDEV_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/crossdev}"
venv="$cache/xla-venv"
out="${CROSSDEV_XLA_OUT:-reports/xla}"
t0=$SECONDS
say() { echo "make xla: $*"; }

mapfile -t pins < <("$PYTHON" - "$here/pyproject.toml" <<'PY'
import sys
try:
    import tomllib
except ImportError:  # Python < 3.11
    from pip._vendor import tomli as tomllib
with open(sys.argv[1], "rb") as f:
    print("\n".join(tomllib.load(f)["tool"]["crossdev"]["xla-runtime"]))
PY
)
((${#pins[@]} == 2)) || { say "pyproject.toml [tool.crossdev] xla-runtime: expected [\"torch==X\", \"torch-xla==X\"]"; exit 2; }
torch_pin="${pins[0]#torch==}"; xla_pin="${pins[1]#torch-xla==}"

# --- 1. the venv.
venv_versions() {
  "$venv/bin/python" - 2>/dev/null <<'PY' || true
from importlib import metadata
print(metadata.version("torch").split("+")[0], metadata.version("torch-xla"))
PY
}
have="$(venv_versions)"
if [[ "$have" != "$torch_pin $xla_pin" ]]; then
  if [[ "${CROSSDEV_SKIP_SETUP:-0}" == 1 ]]; then
    say "no torch $torch_pin + torch-xla $xla_pin in $venv (found '${have:-nothing}') and CROSSDEV_SKIP_SETUP=1"; exit 2
  fi
  say "installing torch==$torch_pin torch-xla==$xla_pin into $venv (found '${have:-nothing}'; ~4 GB, once per machine)"
  ts=$SECONDS
  mkdir -p "$cache"
  [[ -x "$venv/bin/python" ]] || "$PYTHON" -m venv "$venv" || { say "cannot create $venv"; exit 2; }
  # --isolated: PyPI, ignoring a pip config that pins CPU wheels (torch_xla needs PyPI's build of torch)
  "$venv/bin/python" -m pip install --isolated --no-input -q --disable-pip-version-check \
    "torch==$torch_pin" "torch-xla==$xla_pin" || { say "pip install failed"; exit 2; }
  have="$(venv_versions)"
  [[ "$have" == "$torch_pin $xla_pin" ]] || { say "the venv has '$have', not torch $torch_pin + torch-xla $xla_pin"; exit 2; }
  say "venv install took $((SECONDS - ts))s"
fi
say "torch ${have% *} + torch-xla ${have#* } from $venv"

# --- 2. crossdev built against that torch and installed beside it.
# ccache is the project's own launcher (cmake/CrossdevBuildSpeed.cmake: paths relative to the clone).
build="$here/build-xla"
command -v ccache >/dev/null && export CCACHE_DIR="${CCACHE_DIR:-$cache/ccache}" CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-8G}"
ts=$SECONDS
make --no-print-directory install PYTHON="$venv/bin/python" BUILD="$build" JOBS="$JOBS" BUILD_TESTS=OFF BUILD_BENCH=OFF \
  || { say "building crossdev against torch $torch_pin failed"; exit 2; }
say "build and install took $((SECONDS - ts))s ($build)"
python="$build/venv/bin/python"

# --- 3. the matrices with xla real.
export PJRT_DEVICE="${PJRT_DEVICE:-CPU}"
"$python" -m crossdev devices || { say "crossdev devices failed"; exit 2; }
if ! "$python" -m crossdev devices --json | "$python" -c 'import json,sys; d=json.load(sys.stdin)["devices"]; sys.exit(0 if any(x["kind"]=="xla" and x["provenance"]=="real" for x in d) else 1)'; then
  say "torch_xla is installed but crossdev sees no real xla device (crossdev devices above says why)"; exit 2
fi
mkdir -p "$out"
ts=$SECONDS
CROSSDEV_REPORT_FILTER="${CROSSDEV_XLA_FILTER:-}" CROSSDEV_REPORT_SHARD="${CROSSDEV_XLA_SHARD:-}" CROSSDEV_REPORT_MATRICES="matrices matrices/models matrices/xla" \
  CROSSDEV_SKIP_BENCH=1 bash ci/report.sh "$build" "$out" "$python" ""
rc=$?
say "conformance on xla: rc=$rc in $((SECONDS - ts))s; bundle, JUnit and report in $out/"
# The Python API as a user calls it, in a fresh process (no `import torch_xla` first): crossdev.compare_model
# on each models case that ran on the real xla must give the row's verdict (python/crossdev/models/agreement.py).
if [[ -f "$out/bundle.json" ]]; then
  ts=$SECONDS
  "$python" -m crossdev.models.agreement "$out/bundle.json" --import-path examples/models
  a=$?
  say "compare_model against the rows: rc=$a in $((SECONDS - ts))s"
  ((a != 0 && rc == 0)) && rc=$a
  # Every genuine wrong result (fail, or xfail under a numerics entry) comes with a `crossdev repro` script that
  # reproduces it with torch_xla alone, outside the repository (python/crossdev/repro_check.py), kept in $out/repro/.
  ts=$SECONDS
  rm -rf "$out/repro"
  out_abs="$(cd "$out" && pwd)"
  (cd "${TMPDIR:-/tmp}" && "$python" -m crossdev.repro_check "$out_abs/bundle.json" --keep "$out_abs/repro") 2>&1 | tail -n 12
  r=${PIPESTATUS[0]}
  say "repro scripts against their cases: rc=$r in $((SECONDS - ts))s (scripts in $out/repro/)"
  ((r != 0 && rc == 0)) && rc=$r
fi
if [[ -f reports/out/bundle.json && -f "$out/bundle.json" ]]; then
  "$python" -m crossdev report reports/out/bundle.json "$out/bundle.json" --out reports/merged > /dev/null &&
    say "reports/merged/: make report's runner and this one side by side"
fi
say "done in $((SECONDS - t0))s"
exit $rc
