#!/usr/bin/env bash
# Idempotent setup: installs only what is missing, so `make` on a warm machine costs a few checks.
#   ci/setup.sh          what building and running crossdev needs (make build, make report)
#   ci/setup.sh --test   that, plus what only crossdev's own tests need (make test)
# Debian:  build: GoogleTest/GoogleMock, Google Benchmark, yaml-cpp + libyaml (matrix loader),
#                 libtcmalloc-minimal4 (the bench under tcmalloc: CROSSDEV_BENCH_ALLOCATOR)
#          test:  chromium (the report's rendering test)
# PyPI:    the pins in pyproject.toml: [build-system] requires (scikit-build-core, cmake, ninja) and the
#          extras make report needs (REPORT_EXTRAS: opinfo, bench, models); with --test, the test extra too
#          (its crossdev[...] entries expanded from the same file). torch only when none is installed:
#          a torch 2.x already there (CPU, CUDA, ROCm, XPU, a nightly) is used as it is, never replaced.
set -euo pipefail
# CROSSDEV_SKIP_SETUP=1: install nothing (offline machines that are already set up, e.g. GPU hosts).
if [[ "${CROSSDEV_SKIP_SETUP:-0}" == 1 ]]; then
  echo "setup: skipped (CROSSDEV_SKIP_SETUP=1)"
  exit 0
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
with_test=0
[[ "${1:-}" == --test ]] && with_test=1

debian_packages=(libgtest-dev libgmock-dev libbenchmark-dev libyaml-cpp-dev libyaml-dev libtcmalloc-minimal4)
((with_test)) && debian_packages+=(chromium)
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

# The pins from pyproject.toml, minus what is installed at that version; torch only when absent.
mapfile -t pip_missing < <("$PYTHON" - "$here/pyproject.toml" "$with_test" <<'PY'
import importlib.util, re, sys
from importlib import metadata
try:
    import tomllib
except ImportError:  # Python < 3.11
    from pip._vendor import tomli as tomllib
with open(sys.argv[1], "rb") as f:
    project = tomllib.load(f)
extras = project["project"]["optional-dependencies"]
REPORT_EXTRAS = ("opinfo", "bench", "models")  # what make report runs: the opinfo suite, the benchmark drivers, transformers' models


def expand(extra, seen=()):
    """The pins of one extra, its crossdev[a,b] entries replaced by those extras' pins."""
    for pin in extras[extra]:
        if pin.startswith(project["project"]["name"] + "["):
            for name in pin.split("[", 1)[1].rstrip("]").split(","):
                if name not in seen:
                    yield from expand(name.strip(), seen + (extra,))
        else:
            yield pin


pins = list(project["build-system"]["requires"])
for extra in REPORT_EXTRAS + (("test",) if sys.argv[2] == "1" else ()):
    pins += [pin for pin in expand(extra) if pin not in pins]
default_torch = project["tool"]["crossdev"]["default-torch"]
spec = importlib.util.find_spec("torch")
if spec is None:
    print(f"setup: no torch in {sys.executable}: installing {default_torch}", file=sys.stderr)
    pins.append(default_torch)
else:
    try:
        version = metadata.version("torch")
    except metadata.PackageNotFoundError:
        version = "(no package metadata)"
    folder = list(spec.submodule_search_locations)[0]
    print(f"setup: using the installed torch {version} ({folder}); it is not replaced", file=sys.stderr)
for pin in pins:
    name, _, version = pin.partition("==")
    try:
        installed = metadata.version(name)
    except metadata.PackageNotFoundError:
        print(pin); continue
    if version and installed.split("+")[0] != version:
        print(pin)
PY
)
if ((${#pip_missing[@]})); then
  echo "setup: installing Python packages: ${pip_missing[*]}"
  "$PYTHON" -m pip install -q --disable-pip-version-check "${pip_missing[@]}"
fi
echo "setup: ok"
