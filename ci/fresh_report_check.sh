#!/usr/bin/env bash
# `make report` from nothing: the README's first command, in a Python that holds only torch.
#
# A machine that ran `make test` before keeps what it installed, so a package that only `make test`
# installs could hide a missing step of `make report` (issue 38: op_db's expecttest). This check makes,
# every time, a new venv without system site-packages, installs only torch into it (pyproject.toml's
# default-torch pin), and runs `make report PYTHON=<that venv>`: every setup step runs as on a fresh
# machine (CROSSDEV_SKIP_SETUP is ignored here). What it bounds, never the setup:
#   - the build: `make test`'s build folder is reused when the new venv's torch is byte-identical to the one
#     it was built against (same version and the same libtorch_cpu.so), the only case where its outputs are
#     the ones a fresh build would make; otherwise the check builds in a folder of its own;
#   - the rows: CROSSDEV_FRESH_REPORT_FILTER (default '[mo][op]*': the ops, models and opinfo rows) on the
#     kinds of CROSSDEV_FRESH_REPORT_SIMULATE (default cuda:2), the benchmark pass's `cases` part only.
# Exit: make report's own (0 pass, 1 a case failed, 2 bad input or a missing package).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
build="${BUILD:-build}"
host_python="${PYTHON:-python3}"
work="$(mktemp -d "${TMPDIR:-/tmp}/crossdev_fresh_report.XXXXXX")"
cached_python=""
restore() {
  # the reused build folder goes back to the Python it was configured with (its cache names the interpreter)
  if [[ -n "$cached_python" && -f "$build/CMakeCache.txt" ]]; then
    cmake -S . -B "$build" "-DCROSSDEV_PYTHON_EXECUTABLE=$cached_python" > /dev/null 2>&1 \
      || echo "fresh-report: could not reconfigure $build back to $cached_python (make build will)" >&2
  fi
  rm -rf "$work"
}
trap restore EXIT
SECONDS=0

torch_pin="$("$host_python" -c 'import tomllib, sys; print(tomllib.load(open("pyproject.toml", "rb"))["tool"]["crossdev"]["default-torch"])')"
"$host_python" -m venv "$work/python" || exit 2
fresh="$work/python/bin/python"
echo "fresh-report: a venv without system site-packages ($work/python); installing only $torch_pin"
"$fresh" -m pip install -q --disable-pip-version-check "$torch_pin" || { echo "fresh-report: installing $torch_pin failed" >&2; exit 2; }
"$fresh" -m pip list --disable-pip-version-check --format=freeze 2>/dev/null | sed 's/^/fresh-report:   holds /'

# The build folder's torch, and whether the new venv's torch is the same bytes.
identity='import hashlib, pathlib, torch
lib = next(pathlib.Path(torch.__file__).parent.joinpath("lib").glob("libtorch_cpu.*"))
print(torch.__version__, hashlib.sha256(lib.read_bytes()).hexdigest(), torch.utils.cmake_prefix_path)'
make_args=(PYTHON="$fresh" VENV="$work/report-venv" REPORT_DIR="$work/report"
           SIMULATE="${CROSSDEV_FRESH_REPORT_SIMULATE:-cuda:2}")
if [[ -f "$build/CMakeCache.txt" ]]; then
  cached_python="$(sed -n 's/^CROSSDEV_PYTHON_EXECUTABLE:[A-Z]*=//p' "$build/CMakeCache.txt")"
  read -r b_version b_hash b_prefix < <("${cached_python:-$host_python}" -c "$identity" 2>/dev/null) || true
  read -r f_version f_hash _ < <("$fresh" -c "$identity")
  if [[ -n "${b_hash:-}" && "$b_version" == "$f_version" && "$b_hash" == "$f_hash" ]]; then
    echo "fresh-report: reusing $build: its torch $b_version is byte-identical to the new venv's"
    make_args+=(BUILD="$build" "CMAKE_ARGS=-DCMAKE_PREFIX_PATH=$b_prefix")
  else
    echo "fresh-report: $build was built against another torch (${b_version:-unknown}); building in $work/build"
    cached_python=""
    make_args+=(BUILD="$work/build")
  fi
else
  make_args+=(BUILD="$work/build")
fi

env -u CROSSDEV_SKIP_SETUP -u PYTHONPATH -u VIRTUAL_ENV \
  CROSSDEV_REPORT_FILTER="${CROSSDEV_FRESH_REPORT_FILTER:-[mo][op]*}" \
  CROSSDEV_BENCH_PARTS=cases CROSSDEV_BENCH_COMPILE=0 CROSSDEV_BENCH_OPINFO=0 \
  make report "${make_args[@]}"
rc=$?
[[ -f "$work/report/bundle.json" ]] && "$fresh" - "$work/report/bundle.json" <<'PY'
import collections, json, sys
cases = json.load(open(sys.argv[1]))["cases"]
print("fresh-report: bundle:", dict(collections.Counter(c["status"] for c in cases)))
PY
echo "fresh-report: make report from a Python holding only torch: rc=$rc in ${SECONDS}s"
exit $rc
