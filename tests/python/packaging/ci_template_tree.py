"""The build tree of test_ci_template.py: `<build dir>-ci-template` beside the main one (scikit-build-core's
build-dir for the template's `pip install --no-build-isolation`), configured with the cmake defines the main
tree was configured with, so ccache (keyed on paths relative to the checkout, cmake/CrossdevBuildSpeed.cmake)
serves the main tree's compilations. `make build-tests` builds it (a build belongs to the build, not to the
test's time); the test builds it again, which compiles nothing unless a source changed since.

    python3 tests/python/packaging/ci_template_tree.py BUILD_DIR     # exit 0 built, 1 the build failed

Torch-free and pytest-free: the Makefile runs it with the project's Python."""
from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

# the main tree's defines the template's wheel build must see (and pyproject's [tool.scikit-build.cmake.define])
DEFINES = ["CROSSDEV_BUILD_TESTS", "CROSSDEV_BUILD_BENCH", "CROSSDEV_BUILD_PYTHON", "CROSSDEV_PYTHON_EXECUTABLE"]


def own_build_dir(build_dir: pathlib.Path) -> pathlib.Path:
    """Beside the main tree, at the same depth under the checkout (so ccache's paths, relative to the checkout,
    are the main tree's), named after it (`/build*/` is ignored by git)."""
    return build_dir.parent / f"{build_dir.name}-ci-template"


def cmake_cache(build_dir: pathlib.Path) -> dict:
    cache = {}
    for line in (build_dir / "CMakeCache.txt").read_text(errors="replace").splitlines():
        m = re.match(r"^([A-Za-z0-9_]+):[A-Z]+=(.*)$", line)
        if m:
            cache[m.group(1)] = m.group(2)
    return cache


def skbuild_defines(repo_root: pathlib.Path, build_dir: pathlib.Path) -> list:
    """KEY=VALUE of DEFINES and pyproject's [tool.scikit-build.cmake.define], at the main tree's values."""
    cache = cmake_cache(build_dir)
    names = list(DEFINES)
    try:
        import tomllib
    except ImportError:          # Python < 3.11: the names above are the ones pyproject sets
        tomllib = None
    if tomllib is not None:
        pyproject = tomllib.loads((repo_root / "pyproject.toml").read_text(encoding="utf-8"))
        names += [k for k in pyproject["tool"]["scikit-build"].get("cmake", {}).get("define", {}) if k not in names]
    return [f"{k}={cache[k]}" for k in names if k in cache]


def prepare(repo_root: pathlib.Path, build_dir: pathlib.Path) -> tuple:
    """Configures (once) and builds the tree: (its folder, '' or what failed)."""
    own = own_build_dir(build_dir)
    defines = [f"-D{d}" for d in skbuild_defines(repo_root, build_dir)]
    if not (own / "build.ninja").exists():
        r = subprocess.run(["cmake", "-S", str(repo_root), "-B", str(own), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                            *defines], capture_output=True, text=True)
        if r.returncode != 0:
            return own, f"configuring {own} failed:\n{(r.stdout + r.stderr)[-4000:]}"
    r = subprocess.run(["cmake", "--build", str(own), "-j", str(os.cpu_count() or 2)], capture_output=True, text=True)
    return own, "" if r.returncode == 0 else f"building {own} failed:\n{(r.stdout + r.stderr)[-4000:]}"


def main(argv) -> int:
    if len(argv) != 1 or not (pathlib.Path(argv[0]) / "CMakeCache.txt").is_file():
        print("usage: ci_template_tree.py BUILD_DIR (a configured main build tree)", file=sys.stderr)
        return 2
    repo_root = pathlib.Path(__file__).resolve().parents[3]
    own, failure = prepare(repo_root, pathlib.Path(argv[0]).resolve())
    if failure:
        print(failure, file=sys.stderr)
        return 1
    print(f"ci template's tree: {own} built")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
