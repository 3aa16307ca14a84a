"""crossdev: cross-device conformance for PyTorch device handling.

``import crossdev`` is free: it imports neither torch nor the compiled core, and changes nothing in
the process. The core, ``crossdev._crossdev`` (``resolve``, ``host_profile``, ``harness``, ``sim``,
...), is loaded on first use of one of its names, after torch, so the extension resolves LibTorch
and torch's pybind11 type casters from the same, already-loaded libraries. The pure-Python parts
(``crossdev.report``, ``crossdev.gate``, ``crossdev.merge``, ...) never load it.
"""
from __future__ import annotations

import importlib
import importlib.util

from . import _paths

# For -DCMAKE_PREFIX_PATH, as torch.utils.cmake_prefix_path: find_package(crossdev) finds its package here.
cmake_prefix_path = _paths.cmake_prefix_path()

__version__ = "0.1.0"

# Top-level names defined in a pure-Python submodule, imported on first use.
_PYTHON_NAMES = {"compare_model": "models"}


def _extension():
    import os
    import sys

    import torch  # noqa: F401  (must precede the extension)

    # The engine inside this process (the pytest plugin's rows) starts its Python worker with this interpreter.
    os.environ.setdefault("CROSSDEV_PYTHON", sys.executable)

    return importlib.import_module("crossdev._crossdev")


def load():
    """Load the compiled core now and return it: registers crossdev's ops as torch.ops.crossdev.*
    (a library of operators, nothing else: no device, no backend). Any use of a core name loads it too."""
    return _extension()


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    if name in _PYTHON_NAMES:
        value = getattr(importlib.import_module(f"{__name__}.{_PYTHON_NAMES[name]}"), name)
        globals()[name] = value
        return value
    if importlib.util.find_spec(f"{__name__}.{name}") is not None:  # a pure-Python submodule (report, gate, ...)
        return importlib.import_module(f"{__name__}.{name}")
    ext = _extension()
    try:
        value = getattr(ext, name)
    except AttributeError:
        raise AttributeError(f"module 'crossdev' has no attribute '{name}'") from None
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | {n for n in dir(_extension()) if not n.startswith("_")})
