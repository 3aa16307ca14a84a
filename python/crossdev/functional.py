"""crossdev's ops as Python functions: ``crossdev.functional.modulate(x, shift, scale)``.

Each function is ``torch.ops.crossdev.<op>.default`` (the same schema: arguments by position or by
name, defaults, result, autograd and backends; a call with missing, extra or unknown arguments raises
Python's TypeError for the function's signature, the schema's) at about the cost of one native torch call.
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
    """The op as a Python function with the schema's own signature (written out, so a call packs no
    *args tuple or **kwargs dict: about 0.05 us over the fast path, against 0.2 us for (*args, **kwargs))."""
    overload = getattr(torch.ops.crossdev, name).default
    params, passed, namespace = [], [], {"_fast": _core.ops.caller(name), "_overload": overload,
                                         "_is_dynamo_compiling": _is_dynamo_compiling}
    keyword_only = False
    for i, arg in enumerate(overload._schema.arguments):
        if arg.kwarg_only and not keyword_only:
            params.append("*")
            keyword_only = True
        if arg.has_default_value():
            namespace[f"_default{i}"] = arg.default_value
            params.append(f"{arg.name}=_default{i}")
        else:
            params.append(arg.name)
        passed.append(f"{arg.name}={arg.name}" if arg.kwarg_only else arg.name)
    args = ", ".join(passed)
    source = (f"def {name}({', '.join(params)}):\n"
              f"    if _is_dynamo_compiling():\n"
              f"        return _overload({args})\n"
              f"    return _fast({args})\n")
    exec(compile(source, f"<crossdev.functional.{name}>", "exec"), namespace)  # noqa: S102  (the schema's names only)
    function = namespace[name]
    function.__module__ = __name__
    function.__doc__ = f"crossdev::{overload._schema} (torch.ops.crossdev.{name}.default, called directly in eager mode)."
    return function


__all__ = sorted(_core.ops.op_names())
globals().update({_name: _function(_name) for _name in __all__})
