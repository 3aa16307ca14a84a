#!/usr/bin/env bash
# Idempotent setup: installs only what is missing, so `make` on a warm machine costs a few checks.
#   Debian: GoogleTest/GoogleMock, Google Benchmark, yaml-cpp and libyaml (matrix loader), chromium (report test),
#           libtcmalloc-minimal4 (the bench under tcmalloc: CROSSDEV_BENCH_ALLOCATOR, test_bench_driver.py).
#   PyPI:   the pins in requirements.txt (torch, pybind11, pytest, ...).
set -euo pipefail
# CROSSDEV_SKIP_SETUP=1: install nothing (offline machines that are already set up, e.g. GPU hosts).
if [[ "${CROSSDEV_SKIP_SETUP:-0}" == 1 ]]; then
  echo "setup: skipped (CROSSDEV_SKIP_SETUP=1)"
  exit 0
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"

debian_packages=(libgtest-dev libgmock-dev libbenchmark-dev libyaml-cpp-dev libyaml-dev chromium libtcmalloc-minimal4)
missing=()
for pkg in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  [[ "$(id -u)" == 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Compare pins with what is installed; hand pip only the requirements that are missing or differ.
mapfile -t pip_missing < <("$PYTHON" - "$here/requirements.txt" <<'PY'
import sys
from importlib import metadata
for raw in open(sys.argv[1]):
    line = raw.split("#", 1)[0].strip()
    if not line:
        continue
    name, _, version = line.partition("==")
    try:
        installed = metadata.version(name)
    except metadata.PackageNotFoundError:
        print(line); continue
    if installed.split("+")[0] != version:
        print(line)
PY
)
if ((${#pip_missing[@]})); then
  echo "setup: installing Python packages: ${pip_missing[*]}"
  "$PYTHON" -m pip install -q --disable-pip-version-check "${pip_missing[@]}"
fi
echo "setup: ok"
