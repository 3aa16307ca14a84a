#!/usr/bin/env bash
# make cuda-build-check: compile and link the CUDA flavour of crossdev, no GPU needed.
#   1. a venv with the CUDA torch wheel of the version pyproject.toml's [tool.crossdev] default-torch pins (torch==X from PyPI
#      is the +cu13x build, ~4.7 GB), kept outside the clone and reused while its torch matches;
#   2. a build dir inside the clone (build-cuda/), so a later run is incremental, and ccache (Debian `ccache`,
#      installed here when missing) with its cache outside the clone, keyed on paths relative to the clone
#      (cmake/CrossdevBuildSpeed.cmake), so a clean clone of the same tree on this machine compiles from cache;
#   3. configure with CROSSDEV_ENABLE_CUDA=ON and build every target: every CUDA translation unit
#      compiled, every library, test and tool linked. Nothing is run.
# Between 1. and 2., ci/cuda_fallback_check.sh configures (only) against the same torch with the toolkit
# hidden or of another major version: crossdev goes on without its CUDA kernels unless ON asks for them.
# Environment: CROSSDEV_CACHE_DIR (default ${XDG_CACHE_HOME:-$HOME/.cache}/crossdev),
#   JOBS (default nproc), PYTHON (creates the venv; default python3),
#   CROSSDEV_CUDA_PIP_ARGS (default --isolated: PyPI, ignoring pip config that may pin CPU wheels),
#   CROSSDEV_CUDA_CMAKE_ARGS (extra configure arguments, e.g. -DTORCH_CUDA_ARCH_LIST=9.0),
#   CROSSDEV_SKIP_SETUP=1 (install nothing: no apt-get, no pip; the venv must already be there).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 2)}"
cache="${CROSSDEV_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/crossdev}"
venv="$cache/cuda-venv"
pip_args="${CROSSDEV_CUDA_PIP_ARGS---isolated}"
skip_setup="${CROSSDEV_SKIP_SETUP:-0}"
t0=$SECONDS
say() { echo "cuda-build-check: $*"; }

pin="$(sed -n 's/^default-torch *= *"torch==\([^"]*\)".*/\1/p' "$here/pyproject.toml" | head -n 1)"
[[ -n "$pin" ]] || { say "no default-torch = \"torch==X\" in pyproject.toml [tool.crossdev]"; exit 2; }

# --- 1. the venv with the CUDA wheel.
venv_torch() {
  "$venv/bin/python" -c 'import sys, torch; sys.stdout.write(f"{torch.__version__} {torch.version.cuda}")' 2>/dev/null || true
}
have="$(venv_torch)"
if [[ "${have%% *}" != "$pin"* || "${have##* }" == "None" || -z "$have" ]]; then
  if [[ "$skip_setup" == 1 ]]; then
    say "no CUDA torch $pin in $venv (found '${have:-nothing}') and CROSSDEV_SKIP_SETUP=1"; exit 2
  fi
  say "installing the CUDA torch==$pin wheel into $venv (found '${have:-nothing}')"
  ts=$SECONDS
  mkdir -p "$cache"
  [[ -x "$venv/bin/python" ]] || "$PYTHON" -m venv "$venv"
  # shellcheck disable=SC2086
  "$venv/bin/python" -m pip install $pip_args --no-input -q --disable-pip-version-check "torch==$pin"
  have="$(venv_torch)"
  say "venv install took $((SECONDS - ts))s"
  if [[ "${have%% *}" != "$pin"* || "${have##* }" == "None" ]]; then
    say "the venv's torch is '$have', not a CUDA build of $pin"; exit 2
  fi
fi
say "torch ${have% *} (CUDA ${have##* }) from $venv"
torch_cmake="$("$venv/bin/python" -c 'import sys, torch.utils; sys.stdout.write(torch.utils.cmake_prefix_path)')"

# --- 1b. without a CUDA toolkit of torch's major version (configure only, seconds): AUTO builds
# without crossdev's CUDA kernels and says why; CROSSDEV_ENABLE_CUDA=ON refuses.
ts=$SECONDS
bash "$here/ci/cuda_fallback_check.sh" "$venv/bin/python" || { say "configuring without a matching CUDA toolkit: FAILED"; exit 1; }
say "configure checks without a matching toolkit took $((SECONDS - ts))s"

# --- 2. ccache.
launchers=()
if ! command -v ccache >/dev/null && [[ "$skip_setup" != 1 ]] && command -v apt-get >/dev/null; then
  sudo_cmd=()
  [[ "$(id -u)" == 0 ]] || sudo_cmd=(sudo)
  say "installing ccache"
  { "${sudo_cmd[@]}" apt-get update -qq && DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" \
      apt-get install -y -qq --no-install-recommends ccache; } >/dev/null 2>&1 || say "ccache install failed; building without it"
fi
if command -v ccache >/dev/null; then
  # C++ goes through ccache by the project's own launcher (cmake/CrossdevBuildSpeed.cmake); CUDA here.
  launchers=(-DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  # Paths under the clone hash as relative ones, so a fresh clone elsewhere (CI) hits the cache
  # a previous clone filled; the cache itself lives with the venv.
  export CCACHE_BASEDIR="$here" CCACHE_DIR="${CCACHE_DIR:-$cache/ccache}" CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-8G}"
fi

# --- 3. configure (once per build dir; later runs let ninja re-run CMake when inputs change) and build.
build="$here/build-cuda"
if [[ ! -f "$build/build.ninja" ]]; then
  say "configuring $build"
  # shellcheck disable=SC2086
  cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$torch_cmake" -DCROSSDEV_PYTHON_EXECUTABLE="$venv/bin/python" \
    -DCROSSDEV_ENABLE_CUDA=ON "${launchers[@]}" ${CROSSDEV_CUDA_CMAKE_ARGS:-}
fi
grep -q '^CMAKE_CUDA_COMPILER:' "$build/CMakeCache.txt" || { say "CUDA is not enabled in $build"; exit 1; }
say "building every target in $build with -j $JOBS"
cmake --build "$build" -j "$JOBS"

# Every CUDA translation unit of the source tree was compiled.
mapfile -t cu_sources < <(cd "$here" && git ls-files -co --exclude-standard -- '*.cu' 2>/dev/null || find . -name '*.cu' -not -path './build*')
missing=0
for src in "${cu_sources[@]}"; do
  src="${src#./}"
  obj="$(find "$build" -path "*/$(basename "$src").o" -print -quit)"
  [[ -n "$obj" ]] || { say "not compiled: $src"; missing=1; }
done
((missing == 0)) || exit 1
cudart="$(readelf -d "$build/lib/libcrossdev_ops.so" | grep -c 'NEEDED.*libcudart' || true)"
say "ok: ${#cu_sources[@]} CUDA translation units compiled, every target linked (libcrossdev_ops needs libcudart ${cudart}x) in $((SECONDS - t0))s"
