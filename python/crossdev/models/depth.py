"""The error along the depth (docs/models.md, "The error along the depth"): for every module call,
how far the device is from the CPU golden, inherited and own, in the order the errors propagate.

The INHERITED error costs no extra run: the device's full forward and backward already recorded each
call's output and the gradient reaching it (capture.CallRecorder), as did the golden and the float64
reference, so every case carries it, passing or not. The OWN error needs teacher forcing
(localise.py), which runs only when a check fails; a passing case's points have no own error.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .tolerance import judge_all

NAN = float("nan")


@dataclass
class DepthPoint:
    """One module call on one device, in one phase."""
    path: str  # dotted path from named_modules() ("" = the model itself)
    call: int  # the golden call's index (execution order, capture.ModuleCall.index)
    parent: int | None  # the enclosing call's index
    phase: str  # forward (execution order) | backward (the order gradients reach the calls)
    inherited: float  # max_abs of the device's full run against the golden (output, or gradient at it); nan unknown
    inherited_passed: bool | None  # its verdict under the two rules (tolerance.py); None unknown
    own: float  # max_abs with the golden's inputs (teacher forced); nan when not localised
    own_passed: bool | None
    limit: float  # the dtype's rule on max_abs: atol + rtol * max|golden| (the float64 rule may pass more)


def _limit(golden_tensors, dtype) -> float:
    import torch

    from crossdev import parity
    tensors = [t for t in golden_tensors if isinstance(t, torch.Tensor) and t.is_floating_point() and t.numel()]
    if not tensors:
        return NAN
    rtol, atol = parity.default_tolerance(dtype)
    return atol + rtol * max(float(t.detach().abs().max().double()) for t in tensors)


def _worst(judgements):
    if not judgements:
        return NAN, None
    return max(j.max_abs for _, j in judgements), all(j.passed for _, j in judgements)


def _twin(calls, call):
    """The same call in another run of the same model (same index and path), or None."""
    if calls is None or call.index >= len(calls) or calls[call.index].path != call.path:
        return None
    return calls[call.index]


def _backward_worst(call, twin, ref):
    """(max_abs, verdict) of the gradients that reached the golden call's outputs, on the device."""
    if twin is None:
        return NAN, None
    reached = [i for i, g in enumerate(call.grad_output) if g is not None]
    device = [twin.grad_output[i] if i < len(twin.grad_output) else None for i in reached]
    if any(d is None for d in device):
        return math.inf, False  # a gradient reached the golden's call only
    refs = [ref.grad_output[i] if ref is not None and i < len(ref.grad_output) else None for i in reached]
    return _worst(judge_all(device, [call.grad_output[i] for i in reached],
                            refs if all(r is not None for r in refs) else None))


def inherited(golden_calls, device_calls, reference_calls, dtype, phases) -> list:
    """[DepthPoint] without own errors: forward in execution order, then backward in backward order
    (the reverse of the order the calls return), for the calls a gradient reached."""
    from torch.utils._pytree import tree_flatten
    points = []
    if "forward" in phases:
        for call in golden_calls:
            twin, ref = _twin(device_calls, call), _twin(reference_calls, call)
            worst, passed = _worst(judge_all(twin.output, call.output, ref.output if ref else None)) if twin \
                else (NAN, None)
            points.append(DepthPoint(call.path, call.index, call.parent, "forward", worst, passed, NAN, None,
                                     _limit(tree_flatten(call.output)[0], dtype)))
    if "backward" in phases:
        for call in sorted(golden_calls, key=lambda c: -c.finished):
            golden = [g for g in call.grad_output if g is not None]
            if not golden:
                continue
            worst, passed = _backward_worst(call, _twin(device_calls, call), _twin(reference_calls, call))
            points.append(DepthPoint(call.path, call.index, call.parent, "backward", worst, passed, NAN, None,
                                     _limit(golden, dtype)))
    return points


def with_own(points, layers) -> list:
    """The points with each localised call's own error (localise.LayerError) filled in."""
    own = {(layer.phase, layer.call_index): layer for layer in layers}
    for point in points:
        layer = own.get((point.phase, point.call))
        if layer is not None:
            point.own, point.own_passed = layer.own, layer.passed
    return points


def losses(golden, reference, device) -> dict:
    """The train check's loss before each optimizer step and after the last, per run (plain floats)."""
    return {"golden": [float(v) for v in golden], "float64": [float(v) for v in reference],
            "device": [float(v) for v in device]}
