"""One OpInfo sample on the device and on the CPU (the golden, as test_mps.py's TestConsistency
does), forward or backward, and the comparison of every tensor they return."""
from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch.utils._pytree import tree_flatten, tree_map

from . import open_contract
from .host_arguments import keep_on_host
from .selection import full_name
from .tolerances import Tolerance


class DeviceError(Exception):
    """The op raised on the device but not on the CPU: the case's `error`."""


class GoldenError(Exception):
    """The op raised on the CPU: the sample has no golden and is not counted."""


@dataclass
class Kept:
    """What a failing sample's float64 diagnostic needs (float64_diagnostic.py): both sides' results
    (outputs, or gradients for backward) and the grad_outputs the backward used."""
    actual: object
    expected: object
    grad_outputs: list = field(default_factory=list)


@dataclass
class Outcome:
    """One sample's comparison: `mismatch` is "" when every tensor agrees; `kept` is set when it is not.
    `shapes`: the sample's input shapes where the runner records them (the CPU-capability axis)."""
    mismatch: str = ""
    max_abs: float = 0.0
    max_rel: float = 0.0
    max_ulp: float = 0.0
    shapes: list = field(default_factory=list)
    kept: Kept | None = None


def _to_device(sample, device):
    return sample.transform(
        lambda t: t.detach().to(device).requires_grad_(t.requires_grad) if isinstance(t, torch.Tensor) else t)


def shapes_of(sample) -> list:
    flat, _ = tree_flatten((sample.input, sample.args, sample.kwargs))
    return [tuple(t.shape) for t in flat if isinstance(t, torch.Tensor)]


def variant_missing(op, variant: str, check: str) -> str | None:
    """Why op_db's OpInfo has no `variant` form for this check, or None when it has one."""
    if variant == "inplace" and op.inplace_variant is None:
        return "op_db: no in-place variant (op.inplace_variant is None)"
    if variant == "out" and not op.supports_out:
        return "op_db: no out= variant (supports_out=False)"
    if variant == "out" and check == "backward":
        return "out= forms do not support autograd: the out variant has no backward check"
    return None


def _empty_like_on(template, device):
    """The preallocated out= argument: an empty tensor like each tensor of the functional result."""
    if isinstance(template, torch.Tensor):
        return torch.empty_like(template.detach(), device=device)
    if isinstance(template, (tuple, list)):
        return tuple(_empty_like_on(t, device) for t in template)
    raise TypeError(f"out= needs tensor results; the op returned {type(template).__name__}")


def _call(op, sample, variant="function", out_template=None, device=None):
    """The op's `variant` form on `sample`: op(...), op.inplace_variant(clone of the input, ...) (the
    clone keeps the sample's own input intact and lets an input that requires grad be written), or
    op(..., out=<preallocated like the CPU's functional result on `device`>), returning `out`."""
    if variant == "inplace":
        inp = tree_map(lambda t: t.clone() if isinstance(t, torch.Tensor) else t, sample.input)
        return op.inplace_variant(inp, *sample.args, **sample.kwargs)
    if variant == "out":
        out = _empty_like_on(out_template, device)
        op(sample.input, *sample.args, **sample.kwargs, out=out)
        return out
    return op(sample.input, *sample.args, **sample.kwargs)


def _compare_tensor(label, actual, expected, tol: Tolerance, values: bool, out: Outcome) -> None:
    if actual.shape != expected.shape or actual.dtype != expected.dtype or actual.layout != expected.layout:
        out.mismatch = out.mismatch or (f"{label}: metadata differs: device {tuple(actual.shape)} {actual.dtype} "
                                        f"{actual.layout}, cpu {tuple(expected.shape)} {expected.dtype} {expected.layout}")
        return
    if not values:
        return
    from crossdev import parity

    a = actual.detach().to("cpu")
    e = expected.detach()
    if a.layout != torch.strided:
        a, e = a.to_dense(), e.to_dense()
    try:
        c = parity.compare(a, e, rtol=tol.rtol, atol=tol.atol, equal_nan=True)
    except (RuntimeError, ValueError, TypeError):  # a dtype the comparator does not measure: assert_close's verdict
        try:
            torch.testing.assert_close(a, e, rtol=tol.rtol, atol=tol.atol, equal_nan=True)
            c = {"passed": True}
        except AssertionError as mismatch:
            c = {"passed": False, "summary": str(mismatch).strip().splitlines()[0]}
    for key in ("max_abs", "max_rel", "max_ulp"):
        value = c.get(key)
        if value is not None and value == value:  # a NaN metric is "non-finite": reported by the verdict
            setattr(out, key, max(getattr(out, key), float(value)))
    if not c["passed"]:
        out.mismatch = out.mismatch or f"{label}: {c['summary']}"


def _compare(actual, expected, tol, values, out, what):
    a_flat, _ = tree_flatten(actual)
    e_flat, _ = tree_flatten(expected)
    if len(a_flat) != len(e_flat):
        out.mismatch = f"{what}: the device returned {len(a_flat)} values, the CPU {len(e_flat)}"
        return
    for i, (a, e) in enumerate(zip(a_flat, e_flat)):
        label = f"{what}[{i}]"
        if isinstance(e, torch.Tensor) and isinstance(a, torch.Tensor):
            _compare_tensor(label, a, e, tol, values, out)
        elif isinstance(e, torch.Tensor) or isinstance(a, torch.Tensor):
            out.mismatch = out.mismatch or f"{label}: a tensor on one side only ({type(a).__name__} vs {type(e).__name__})"
        elif values and a != e and not (a != a and e != e):
            out.mismatch = out.mismatch or f"{label}: {a!r} on the device, {e!r} on the CPU"


def _grad_inputs(sample):
    flat, _ = tree_flatten((sample.input, sample.args, sample.kwargs))
    return [t for t in flat if isinstance(t, torch.Tensor) and t.requires_grad]


def backward_sides(expected, actual, golden_sample, device_sample):
    """What a backward check differentiates on each side: (golden outputs, device outputs, golden
    inputs, device inputs, grad_outputs), the outputs and inputs that require grad, grad_outputs random
    like the golden's outputs (the same on both sides); None when there is nothing to differentiate."""
    e_outs = [t for t in tree_flatten(expected)[0] if isinstance(t, torch.Tensor) and t.requires_grad]
    a_outs = [t for t in tree_flatten(actual)[0] if isinstance(t, torch.Tensor) and t.requires_grad]
    e_inputs, a_inputs = _grad_inputs(golden_sample), _grad_inputs(device_sample)
    if not e_outs or not e_inputs:
        return None
    return e_outs, a_outs, e_inputs, a_inputs, [torch.randn_like(t) for t in e_outs]


def run_sample(op, sample, device, check: str, tol: Tolerance, values: bool, variant: str = "function") -> Outcome:
    """`variant` (function, inplace, out: samples.variant_missing says when the OpInfo lacks it) is
    run on both sides: the golden is the same form on the CPU."""
    out = Outcome()  # shapes: the caller names a failing sample's (shapes_of)
    try:
        template = _call(op, sample) if variant == "out" else None
        expected = _call(op, sample, variant, template, "cpu")
    except Exception as e:  # noqa: BLE001
        raise GoldenError(f"{type(e).__name__}: {e}") from e
    dev_sample = keep_on_host(op, sample, _to_device(sample, device))
    try:
        actual = _call(op, dev_sample, variant, template, device)
    except Exception as e:  # noqa: BLE001
        raise DeviceError(f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}") from e
    if check == "forward":
        if values:  # an order the contract leaves open: each side in canonical form (open_contract.OPEN_ORDER)
            actual, expected = open_contract.comparable(full_name(op), sample, dev_sample, actual, expected)
        _compare(actual, expected, tol, values, out, "output")
        if out.mismatch:
            out.kept = Kept(actual, expected)
        return out
    # backward: the same grad_outputs on both sides, gradients of every input that requires grad
    sides = backward_sides(expected, actual, sample, dev_sample)
    if sides is None:
        return out
    e_outs, a_outs, e_inputs, a_inputs, grad_outs = sides
    try:
        e_grads = torch.autograd.grad(e_outs, e_inputs, grad_outs, allow_unused=True)
    except Exception as e:  # noqa: BLE001  (linalg.eig: a loss op_db's sample makes ill-defined)
        raise GoldenError(f"backward: {type(e).__name__}: {e}") from e
    try:
        # each grad_output where its output is (`to("cpu")` on a device tensor returns a CPU tensor)
        a_grads = torch.autograd.grad(a_outs, a_inputs, [g.to(a.device) for g, a in zip(grad_outs, a_outs)],
                                      allow_unused=True)
    except Exception as e:  # noqa: BLE001
        raise DeviceError(f"backward: {type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}") from e
    compared_a, compared_e = list(a_grads), list(e_grads)
    if values:  # a choice among ties the contract leaves open: summed over tie groups (open_contract.OPEN_TIES)
        compared_a, compared_e = open_contract.comparable_gradients(full_name(op), sample, dev_sample, compared_a, compared_e)
    _compare(compared_a, compared_e, tol, values, out, "grad")
    if out.mismatch:
        out.kept = Kept(list(a_grads), list(e_grads), grad_outs)
    return out
