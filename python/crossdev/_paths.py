"""Where the installed pieces of crossdev are, found relative to this file (no torch import).

Installed (the wheel):  crossdev/bin/crossdev, crossdev/lib/, crossdev/matrices/, crossdev/share/cmake/
Build tree (`make build`, PYTHONPATH=build/python): build/python/crossdev -> build/bin, build/lib, and the
source tree's matrices/ (found through build/CMakeCache.txt's crossdev_SOURCE_DIR).
"""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
_BUILD_TREE = PACKAGE_DIR.parent.parent  # build/python/crossdev -> build/


def _installed() -> bool:
    return (PACKAGE_DIR / "bin").is_dir()


def engine_binary() -> Path:
    """The C++ engine (`crossdev run|devices|resolve`)."""
    return (PACKAGE_DIR / "bin" / "crossdev") if _installed() else (_BUILD_TREE / "bin" / "crossdev")


def library_dir() -> Path:
    return (PACKAGE_DIR / "lib") if _installed() else (_BUILD_TREE / "lib")


def _source_dir_of_build_tree() -> Path | None:
    cache = _BUILD_TREE / "CMakeCache.txt"
    try:
        for line in cache.read_text(errors="replace").splitlines():
            if line.startswith("crossdev_SOURCE_DIR:"):
                return Path(line.split("=", 1)[1])
    except OSError:
        return None
    return None


def matrices_dir() -> Path:
    """The built-in catalog (`crossdev run` with no --matrix)."""
    if (PACKAGE_DIR / "matrices").is_dir():
        return PACKAGE_DIR / "matrices"
    src = _source_dir_of_build_tree()
    return (src / "matrices") if src else (PACKAGE_DIR / "matrices")


def cmake_prefix_path() -> str:
    """For -DCMAKE_PREFIX_PATH: find_package(crossdev) finds share/cmake/crossdev/crossdevConfig.cmake here."""
    return str(PACKAGE_DIR / "share" / "cmake")


def torch_library_dir() -> Path | None:
    """torch/lib of the torch this interpreter imports, without importing torch."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]) / "lib"


def engine_environment(base: dict | None = None) -> dict:
    """The environment the engine runs in: torch's libraries on the loader path. The engine's own
    libraries are found through its RPATH ($ORIGIN/../lib); torch's may live in another
    site-packages (a venv with --system-site-packages), so its folder is added here. CROSSDEV_PYTHON names
    this interpreter for the engine's Python worker (crossdev.worker), unless the caller set it."""
    env = dict(os.environ if base is None else base)
    # The Python worker the engine starts for Python-defined suites (opinfo) runs this interpreter.
    env.setdefault("CROSSDEV_PYTHON", sys.executable)
    torch_lib = torch_library_dir()
    if torch_lib is not None:
        paths = [str(torch_lib)] + [p for p in env.get("LD_LIBRARY_PATH", "").split(os.pathsep) if p]
        env["LD_LIBRARY_PATH"] = os.pathsep.join(dict.fromkeys(paths))
    return env
