#!/usr/bin/env bash
# `make report` from nothing: the README's first command, in a Python that holds only torch.
#
# A machine that ran `make test` before keeps what it installed, so a package that only `make test`
# installs could hide a missing step of `make report` (issue 38: op_db's expecttest). This check makes,
# every time, a new venv without system site-packages, installs only torch into it (pyproject.toml's
# default-torch pin), and runs `make report PYTHON=<that venv>`: every setup step runs as on a fresh
# machine (CROSSDEV_SKIP_SETUP is ignored here). What it bounds, never the setup:
#   - the build: `make test`'s build folder is reused when the new venv's torch is byte-identical to the one it
#     was built against (same version and the same libtorch_cpu.so, found through the folder's Torch_DIR), the
#     only case where its outputs are the ones a fresh build would make. The new venv's pip never configures
#     that folder: `pip install .` from it would reconfigure the folder with the new venv's Python and cmake
#     (scikit-build-core's init cache forces CMAKE_PREFIX_PATH and the Python paths), recompile everything
#     against the new venv's torch path (501 s) and leave a build.ninja naming a cmake deleted at exit (issue 49).
#     Instead `make wheel` builds the wheel from the folder with the Python whose pip last configured it
#     (its cache's Python_EXECUTABLE: `make install`'s venv) and its CROSSDEV_PYTHON_EXECUTABLE, so pip's
#     configure step changes nothing but its per-run temporary folders and nothing compiles; `make report
#     WHEEL=<it>` installs that wheel into the report's venv. Setup, the folder's `cmake --build` (nothing to
#     do) and everything after the install run from the new venv's Python as on a fresh machine. The folder's
#     CMakeCache.txt and build.ninja after the wheel step must be the same bytes at the end, or the check
#     fails (exit 2). Otherwise (another torch, no build, or the wheel step failed) the check builds in a
#     folder of its own, from the new venv's pip, as a fresh machine does;
#   - the rows: CROSSDEV_FRESH_REPORT_FILTER (default '[mo][op]*': the ops, models and opinfo rows) on the
#     kinds of CROSSDEV_FRESH_REPORT_SIMULATE (default cuda:2), the benchmark pass's `cases` part only.
# Exit: make report's own (0 pass, 1 a case failed, 2 bad input or a missing package); 2 also when the reused
# build folder's CMakeCache.txt or build.ninja changed during make report.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
build="${BUILD:-build}"
host_python="${PYTHON:-python3}"
work="$(mktemp -d "${TMPDIR:-/tmp}/crossdev_fresh_report.XXXXXX")"
trap 'rm -rf "$work"' EXIT
SECONDS=0

torch_pin="$("$host_python" -c 'import tomllib, sys; print(tomllib.load(open("pyproject.toml", "rb"))["tool"]["crossdev"]["default-torch"])')"
"$host_python" -m venv "$work/python" || exit 2
fresh="$work/python/bin/python"
echo "fresh-report: a venv without system site-packages ($work/python); installing only $torch_pin"
"$fresh" -m pip install -q --disable-pip-version-check "$torch_pin" || { echo "fresh-report: installing $torch_pin failed" >&2; exit 2; }
"$fresh" -m pip list --disable-pip-version-check --format=freeze 2>/dev/null | sed 's/^/fresh-report:   holds /'

# The torch a build folder was built against (its Torch_DIR: <torch>/share/cmake/Torch), and the new venv's:
# version and libtorch_cpu's hash. Read from the files, so the folder's own interpreter need not exist.
identity='import glob, hashlib, os, re, sys
root = sys.argv[1]
version = re.search(r"__version__\s*=\s*[\x27\x22]([^\x27\x22]+)", open(os.path.join(root, "version.py")).read()).group(1)
lib = sorted(glob.glob(os.path.join(root, "lib", "libtorch_cpu.*")))[0]
print(version, hashlib.sha256(open(lib, "rb").read()).hexdigest())'
make_args=(PYTHON="$fresh" VENV="$work/report-venv" REPORT_DIR="$work/report"
           SIMULATE="${CROSSDEV_FRESH_REPORT_SIMULATE:-cuda:2}")
f_root="$("$fresh" -c 'import os, torch; print(os.path.dirname(torch.__file__))')"
read -r f_version f_hash < <("$fresh" -c "$identity" "$f_root")
b_torch_dir="$(sed -n 's/^Torch_DIR:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null)"
b_version="" b_hash=""
[[ -n "$b_torch_dir" ]] && read -r b_version b_hash < <("$fresh" -c "$identity" "$b_torch_dir/../../.." 2>/dev/null)
reused=0
if [[ -n "$b_hash" && "$b_version" == "$f_version" && "$b_hash" == "$f_hash" ]]; then
  echo "fresh-report: reusing $build: its torch $b_version is byte-identical to the new venv's"
  # The wheel from $build, built by the Python whose pip last configured it (make install's venv), with the
  # folder's own options: pip's configure step changes nothing, nothing compiles. The host's setup is not
  # this check's subject (CROSSDEV_SKIP_SETUP=1 here); the new venv's runs in full below.
  cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
  b_python="$(cache_value Python_EXECUTABLE)"
  t=$SECONDS
  if [[ -x "$b_python" ]] && CROSSDEV_SKIP_SETUP=1 make wheel BUILD="$build" WHEEL_PYTHON="$b_python" \
       PYTHON="$(cache_value CROSSDEV_PYTHON_EXECUTABLE)" BUILD_TESTS="$(cache_value CROSSDEV_BUILD_TESTS)" \
       BUILD_BENCH="$(cache_value CROSSDEV_BUILD_BENCH)" WHEEL_DIR="$work/wheel" > "$work/wheel.log" 2>&1 &&
     wheel="$(compgen -G "$work/wheel/crossdev-*.whl")" && [[ "$wheel" != *$'\n'* ]]; then
    echo "fresh-report: the wheel from $build in $((SECONDS - t))s, by $b_python's pip: $(basename "$wheel")"
    make_args+=(BUILD="$build" WHEEL="$wheel")
    reused=1
    # What the new venv's make report must leave as it is.
    cp "$build/CMakeCache.txt" "$work/CMakeCache.txt.before" && cp "$build/build.ninja" "$work/build.ninja.before"
  else
    tail -n 20 "$work/wheel.log" 2>/dev/null >&2
    echo "fresh-report: no wheel from $build (its Python ${b_python:-(none)}; see above); building in $work/build" >&2
    make_args+=(BUILD="$work/build")
  fi
else
  echo "fresh-report: $build was not built against this torch (${b_version:-no build}); building in $work/build"
  make_args+=(BUILD="$work/build")
fi

env -u CROSSDEV_SKIP_SETUP -u PYTHONPATH -u VIRTUAL_ENV \
  CROSSDEV_REPORT_FILTER="${CROSSDEV_FRESH_REPORT_FILTER:-[mo][op]*}" \
  CROSSDEV_BENCH_PARTS=cases CROSSDEV_BENCH_COMPILE=0 CROSSDEV_BENCH_OPINFO=0 \
  make report "${make_args[@]}"
rc=$?
if ((reused)); then
  if cmp -s "$work/CMakeCache.txt.before" "$build/CMakeCache.txt" && cmp -s "$work/build.ninja.before" "$build/build.ninja"; then
    echo "fresh-report: $build's CMakeCache.txt and build.ninja are as the wheel step left them"
  else
    diff "$work/CMakeCache.txt.before" "$build/CMakeCache.txt" | head -n 20 >&2
    echo "fresh-report: make report from the new venv changed $build's CMakeCache.txt or build.ninja (issue 49)" >&2
    ((rc == 0)) && rc=2
  fi
fi
[[ -f "$work/report/bundle.json" ]] && "$fresh" - "$work/report/bundle.json" <<'PY'
import collections, json, sys
cases = json.load(open(sys.argv[1]))["cases"]
print("fresh-report: bundle:", dict(collections.Counter(c["status"] for c in cases)))
PY
echo "fresh-report: make report from a Python holding only torch: rc=$rc in ${SECONDS}s"
exit $rc
