"""mylib: a downstream project's PyTorch glue, in the shape crossdev is meant to check.

- ``libmylib_ops.so`` (csrc/mylib_ops.cpp): ``torch.ops.mylib.fused_modulate`` and
  ``torch.ops.mylib.rms_norm``, C++ kernels registered with ``TORCH_LIBRARY``;
- ``mylib.gelu``: ``torch.ops.mylib_py.gelu_tanh``, a Python ``torch.library.custom_op``;
- ``mylib.device``: ``get_device()``, the device picker of seed 004 (TinyRecursiveModels).
"""
import os
import pathlib

import torch

HERE = pathlib.Path(__file__).resolve().parent


def library_path():
    """Where the C++ extension is: $MYLIB_LIBRARY, else the example's own build/ folder."""
    return pathlib.Path(os.environ.get("MYLIB_LIBRARY", HERE.parent / "build" / "libmylib_ops.so"))


def load_library():
    """Registers mylib::fused_modulate and mylib::rms_norm with the dispatcher."""
    torch.ops.load_library(str(library_path()))
