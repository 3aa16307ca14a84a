"""crossdev's ops as Python functions: ``crossdev.functional.modulate(x, shift, scale)``.

Each function is ``torch.ops.crossdev.<op>.default`` (the same schema: arguments by position or by
name, defaults, result, autograd, errors and backends) at about the cost of one native torch call.
In eager mode it calls ``crossdev.ops.caller(op)``, a CPython function that converts the common
arguments itself (plain tensors, Python numbers, None) and calls the dispatcher directly; anything
else (a Tensor subclass or TorchFunctionMode, i.e. ``__torch_function__``; a torch.Generator; a
numpy or symbolic scalar; a wrong argument) it hands to ``torch.ops.crossdev.<op>.default``
unchanged. Under torch.compile, Dynamo traces the ``torch.ops`` overload itself
(``torch.compiler.is_dynamo_compiling()`` is true while it traces), so a compiled graph holds
``crossdev.<op>.default`` as it would from ``torch.ops``, with no graph break.

Importing this module loads torch and the compiled core (``crossdev.load()``).
"""
from __future__ import annotations

import torch

from . import load as _load

_core = _load()
_is_dynamo_compiling = torch.compiler.is_dynamo_compiling


def _function(name: str):
    fast = _core.ops.caller(name)
    overload = getattr(torch.ops.crossdev, name).default

    def call(*args, **kwargs):
        if _is_dynamo_compiling():
            return overload(*args, **kwargs)
        return fast(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__module__ = __name__
    call.__doc__ = f"crossdev::{overload._schema} (torch.ops.crossdev.{name}.default, called directly in eager mode)."
    return call


__all__ = sorted(_core.ops.op_names())
globals().update({_name: _function(_name) for _name in __all__})
