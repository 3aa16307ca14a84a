"""crossdev: cross-device conformance for PyTorch device handling.

The compiled core lives in ``crossdev._crossdev``; torch is imported first so the extension
resolves LibTorch and torch's pybind11 type casters from the same, already-loaded libraries.
"""
import torch  # noqa: F401  (must precede the extension)

from ._crossdev import *  # noqa: F401,F403
from . import _crossdev as _ext

__all__ = [name for name in dir(_ext) if not name.startswith("_")]
