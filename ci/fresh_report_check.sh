#!/usr/bin/env bash
# `make report` from nothing: the README's first command, in a Python that holds only torch.
#
# A machine that ran `make test` before keeps what it installed, so a package that only `make test`
# installs could hide a missing step of `make report` (issue 38: op_db's expecttest). This check makes,
# every time, a new venv without system site-packages, installs only torch into it (pyproject.toml's
# default-torch pin), and runs `make report PYTHON=<that venv>`: every setup step runs as on a fresh
# machine (CROSSDEV_SKIP_SETUP is ignored here). What it bounds, never the setup:
#   - the build: `make test`'s build folder is reused as it is when the new venv's torch is byte-identical to
#     the one it was built against (same version and the same libtorch_cpu.so, found through the folder's
#     Torch_DIR), the only case where its outputs are the ones a fresh build would make. Nothing the C++
#     compiles against names the interpreter (cmake/CrossdevTorch.cmake), so pip's configure step with the new
#     venv's Python compiles nothing, and the next `make test` neither; otherwise the check builds in a folder
#     of its own;
#   - the rows: CROSSDEV_FRESH_REPORT_FILTER (default '[mo][op]*': the ops, models and opinfo rows) on the
#     kinds of CROSSDEV_FRESH_REPORT_SIMULATE (default cuda:2), the benchmark pass's `cases` part only.
# Exit: make report's own (0 pass, 1 a case failed, 2 bad input or a missing package).
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
if [[ -n "$b_hash" && "$b_version" == "$f_version" && "$b_hash" == "$f_hash" ]]; then
  echo "fresh-report: reusing $build as it is: its torch $b_version is byte-identical to the new venv's"
  make_args+=(BUILD="$build")
else
  echo "fresh-report: $build was not built against this torch (${b_version:-no build}); building in $work/build"
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
