"""The `compile` variant of an opinfo row (docs/opinfo.md): the OpInfo's function compiled with
torch.compile (Inductor) against the same function in eager mode, on the same device and the same
samples, forward or backward. Opt-in: each sample is compiled afresh (dynamo's caches are reset
first, so a recompile limit can never silently fall back to eager), which costs seconds per sample."""
from __future__ import annotations

import torch
from .samples import DeviceError, GoldenError, Outcome, _call, _compare, _to_device, backward_sides

GOLDEN = "the same function in eager mode on the same device"
BACKEND = "inductor"


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else ""


def run_sample(op, sample, device, check: str, tol, values: bool, variant: str = "compile") -> Outcome:
    out = Outcome()
    eager_sample = _to_device(sample, device)
    compiled_sample = _to_device(sample, device)
    try:
        expected = _call(op, eager_sample)
    except Exception as e:  # noqa: BLE001
        raise GoldenError(f"{type(e).__name__}: {e}") from e
    torch.compiler.reset()
    compiled = torch.compile(lambda *args, **kwargs: op(*args, **kwargs), backend=BACKEND, dynamic=False)
    try:
        actual = compiled(compiled_sample.input, *compiled_sample.args, **compiled_sample.kwargs)
    except Exception as e:  # noqa: BLE001
        raise DeviceError(f"torch.compile: {type(e).__name__}: {_first_line(e)}") from e
    if check == "forward":
        _compare(actual, expected, tol, values, out, "output")
        return out
    sides = backward_sides(expected, actual, eager_sample, compiled_sample)
    if sides is None:
        return out
    e_outs, a_outs, e_inputs, a_inputs, grad_outs = sides
    e_grads = torch.autograd.grad(e_outs, e_inputs, grad_outs, allow_unused=True)
    try:
        a_grads = torch.autograd.grad(a_outs, a_inputs, grad_outs, allow_unused=True)
    except Exception as e:  # noqa: BLE001
        raise DeviceError(f"torch.compile backward: {type(e).__name__}: {_first_line(e)}") from e
    _compare(list(a_grads), list(e_grads), tol, values, out, "grad")
    return out
