#!/usr/bin/env bash
# Configure crossdev against a CUDA LibTorch without a CUDA toolkit of its major version
# (cmake/CrossdevCuda.cmake; docs/building.md, "Other LibTorch builds"). Five configures, nothing built:
#   hidden     no nvcc anywhere crossdev looks          AUTO: configures, without CUDA kernels, one line why
#   hidden     the same, -DCROSSDEV_ENABLE_CUDA=ON       fails, naming LibTorch's CUDA version
#   mismatch   CUDACXX = a stand-in nvcc of another major version   AUTO: as above, naming both versions
#   mismatch   the same, -DCROSSDEV_ENABLE_CUDA=ON       fails, naming both versions
#   off        whatever toolkit there is left visible, -DCROSSDEV_ENABLE_CUDA=OFF: no toolkit is looked for
# Without kernels the configure must not enable CUDA, must compile no .cu file, and must bake
# "not built (<why>)" into the harness (the bundle's execution_target.cuda_kernels).
# The toolkit is hidden by taking every directory holding an nvcc off PATH and out of CMake's search
# (CMAKE_IGNORE_PATH: /usr/local/cuda/bin, /usr/local/bin, ...), and unsetting CUDA_HOME, CUDA_PATH, CUDACXX.
# usage: ci/cuda_fallback_check.sh PYTHON   (an interpreter whose torch is a CUDA build; ci/cuda_build_check.sh's venv)
# Exit 0 when every case behaves, 1 when one does not, 2 on bad input.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="${1:-}"
say() { echo "cuda-fallback-check: $*"; }
[[ -n "$py" && -x "$py" ]] || { say "usage: $0 PYTHON (an interpreter with a CUDA torch)"; exit 2; }
read -r torch_cuda torch_cmake < <("$py" -c 'import torch, torch.utils; print(torch.version.cuda or "", torch.utils.cmake_prefix_path)' 2>/dev/null)
[[ "$torch_cuda" =~ ^([0-9]+)\.[0-9]+$ ]] || { say "$py's torch is not a CUDA build (torch.version.cuda='$torch_cuda')"; exit 2; }
major="${BASH_REMATCH[1]}"
other=$((major > 12 ? major - 1 : major + 1))  # the stand-in nvcc's major version: never torch's
work="$(mktemp -d "${TMPDIR:-/tmp}/crossdev-cuda-fallback.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cxx="${CXX:-$(command -v c++ || command -v g++)}"

# Where an nvcc could be found, hidden.
ignore=() path=()
IFS=: read -r -a path_dirs <<<"$PATH"
for d in "${path_dirs[@]}" /usr/local/cuda/bin /usr/local/bin /opt/cuda/bin; do
  if [[ -x "$d/nvcc" ]]; then [[ " ${ignore[*]} " == *" $d "* ]] || ignore+=("$d"); elif [[ " ${path_dirs[*]} " == *" $d "* ]]; then path+=("$d"); fi
done
hidden_path="$(IFS=:; echo "${path[*]}")"
ignore_arg="-DCMAKE_IGNORE_PATH=$(IFS=';'; echo "${ignore[*]}")"
for d in "${ignore[@]}"; do
  [[ "$d" == /usr/bin || "$d" == /bin ]] && { say "nvcc is in $d, which cannot be hidden; run this where the toolkit is elsewhere"; exit 2; }
done

# A stand-in nvcc of another major version: `--version` is all crossdev asks it.
mkdir -p "$work/other-cuda/bin"
cat > "$work/other-cuda/bin/nvcc" <<EOF
#!/bin/sh
[ "\$1" = --version ] && { echo "Cuda compilation tools, release $other.8, V$other.8.0"; exit 0; }
exit 1
EOF
chmod +x "$work/other-cuda/bin/nvcc"

failures=0
fail() { say "FAIL ($1): $2"; failures=$((failures + 1)); }
# configure NAME [cmake args...]: rc in $rc, log in $work/NAME.log, build dir $work/NAME. The toolkit is
# hidden (CUDACXX_FOR_CASE: the only nvcc given), except with VISIBLE=1.
configure() {
  local name="$1"; shift
  local hide=(env -u CUDA_HOME -u CUDA_PATH -u CUDACXX PATH="$hidden_path" ${CUDACXX_FOR_CASE:+CUDACXX="$CUDACXX_FOR_CASE"})
  local ignored=("$ignore_arg")
  [[ "${VISIBLE:-0}" == 1 ]] && hide=(env) ignored=()
  "${hide[@]}" cmake -S "$here" -B "$work/$name" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_PREFIX_PATH="$torch_cmake" -DCROSSDEV_PYTHON_EXECUTABLE="$py" "${ignored[@]}" "$@" >"$work/$name.log" 2>&1
  rc=$?
}
# The case configured, without CUDA kernels, and its one line says why.
expect_fallback() {
  local name="$1" why="$2" line
  ((rc == 0)) || { fail "$name" "configure failed (rc=$rc):"; tail -n 20 "$work/$name.log"; return; }
  mapfile -t lines < <(grep -F "CUDA kernels not built" "$work/$name.log")
  ((${#lines[@]} == 1)) || fail "$name" "expected one 'CUDA kernels not built' line, got ${#lines[@]}"
  line="${lines[0]:-}"
  [[ "$line" == *"LibTorch is built with CUDA $torch_cuda and $why"* ]] ||
    fail "$name" "the line does not say 'LibTorch is built with CUDA $torch_cuda and $why': '$line'"
  ! grep -q '^CMAKE_CUDA_COMPILER:' "$work/$name/CMakeCache.txt" || fail "$name" "CUDA was enabled (CMAKE_CUDA_COMPILER cached)"
  ! grep -q '\.cu\.o:' "$work/$name/build.ninja" || fail "$name" "a .cu file is compiled"
  grep -qF "CROSSDEV_CUDA_KERNELS=\"\\\"not built ($why)\\\"" "$work/$name/build.ninja" ||
    fail "$name" "the harness does not get CROSSDEV_CUDA_KERNELS=\"not built ($why)\""
  [[ "${lines[0]:-}" ]] && say "ok ($name): ${line#-- }"
}
# The case failed, naming every version given.
expect_error() {
  local name="$1"; shift
  ((rc != 0)) || { fail "$name" "configure succeeded; CROSSDEV_ENABLE_CUDA=ON must fail without a matching toolkit"; return; }
  local text v
  text="$(tr -s ' \n' ' ' <"$work/$name.log")"
  for v in "$@"; do
    [[ "$text" == *"$v"* ]] || fail "$name" "the error does not name '$v'"
  done
  say "ok ($name): configure failed (rc=$rc), naming: $*"
}

say "torch CUDA $torch_cuda ($torch_cmake); hiding nvcc in: ${ignore[*]:-(none found)}"
configure hidden-auto
expect_fallback hidden-auto "no CUDA toolkit (nvcc) was found"
configure hidden-on -DCROSSDEV_ENABLE_CUDA=ON
expect_error hidden-on "built with CUDA $torch_cuda" "which was not found"
CUDACXX_FOR_CASE="$work/other-cuda/bin/nvcc" configure mismatch-auto
expect_fallback mismatch-auto "the CUDA toolkit found is CUDA $other.8, another major version"
CUDACXX_FOR_CASE="$work/other-cuda/bin/nvcc" configure mismatch-on -DCROSSDEV_ENABLE_CUDA=ON
expect_error mismatch-on "with CUDA $torch_cuda" "is CUDA $other.8" "major versions must match"

VISIBLE=1 configure off-visible -DCROSSDEV_ENABLE_CUDA=OFF
expect_fallback off-visible "CROSSDEV_ENABLE_CUDA is OFF"
! grep -q "Found CUDA\|PyTorch: CUDA" "$work/off-visible.log" || fail off-visible "torch's CMake package looked for the toolkit"

((failures == 0)) || { say "$failures check(s) failed"; exit 1; }
say "ok: a CUDA torch $torch_cuda configures without a matching toolkit, and CROSSDEV_ENABLE_CUDA=ON refuses"
