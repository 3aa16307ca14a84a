"""The float64 diagnostic of a failing sample (docs/opinfo.md): the golden is the CPU in the case's
dtype; the same sample run on the CPU in float64 (complex128 for complex dtypes) says which side,
the device or the CPU golden, is closer to exact, and by how much. Computed only for the failing
samples of a case (at most MAX_SAMPLES of them), so a passing sweep pays nothing for it."""
from __future__ import annotations

import torch
from torch.utils._pytree import tree_flatten

from . import samples

MAX_SAMPLES = 10  # as many as details.failing_samples lists
WIDER = {torch.float32: torch.float64, torch.float16: torch.float64, torch.bfloat16: torch.float64,
         torch.complex64: torch.complex128, torch.complex32: torch.complex128}


def unavailable(op, dtype, check: str) -> str | None:
    """Why this case has no float64 diagnostic, or None."""
    if dtype in (torch.float64, torch.complex128):
        return "the golden is already in double precision"
    wide = WIDER.get(dtype)
    if wide is None:
        return f"no wider dtype than {str(dtype).replace('torch.', '')} to compare with"
    try:
        cpu = op.supported_backward_dtypes("cpu") if check == "backward" else op.supported_dtypes("cpu")
    except Exception:  # noqa: BLE001  (op_db has no list: try it)
        return None
    if wide not in cpu:
        return f"op_db: {str(wide).replace('torch.', '')} is not supported on the CPU ({check})"
    return None


def _widen(sample, dtype):
    wide = WIDER[dtype]
    return sample.transform(lambda t: t.detach().to(wide).requires_grad_(t.requires_grad)
                            if isinstance(t, torch.Tensor) and t.dtype == dtype else t)


def _exact(op, sample, dtype, check: str, variant: str, grad_outputs):
    """The float64 CPU result of `sample`: its outputs (forward) or its gradients (backward)."""
    wide_sample = _widen(sample, dtype)
    if check == "forward":
        template = samples._call(op, wide_sample) if variant == "out" else None
        return samples._call(op, wide_sample, variant, template, "cpu")
    outputs = [t for t in tree_flatten(samples._call(op, wide_sample, variant))[0]
               if isinstance(t, torch.Tensor) and t.requires_grad]
    grads = [g.to(o.dtype) for g, o in zip(grad_outputs, outputs)]
    return list(torch.autograd.grad(outputs, samples._grad_inputs(wide_sample), grads, allow_unused=True))


def _distance(side: torch.Tensor, exact: torch.Tensor) -> float:
    """max |side - exact|, with equal values (infinities, NaN on both) at 0 and a NaN on one side only at inf."""
    side = side.detach().to("cpu", exact.dtype)
    same = (side == exact) | (side.isnan() & exact.isnan())
    gap = (side - exact).abs().masked_fill(same, 0).nan_to_num(nan=float("inf"), posinf=float("inf"))
    return float(gap.max()) if gap.numel() else 0.0


def distances(op, sample, dtype, check: str, variant: str, kept: samples.Kept):
    """(device's, CPU golden's) max distance to the float64 result over the compared tensors."""
    exact = tree_flatten(_exact(op, sample, dtype, check, variant, kept.grad_outputs))[0]
    device, golden = tree_flatten(kept.actual)[0], tree_flatten(kept.expected)[0]
    d_device = d_golden = 0.0
    for a, e, x in zip(device, golden, exact):
        if all(isinstance(t, torch.Tensor) for t in (a, e, x)) and a.shape == e.shape == x.shape:
            d_device = max(d_device, _distance(a, x.detach()))
            d_golden = max(d_golden, _distance(e, x.detach()))
    return d_device, d_golden


def closer(d_device: float, d_golden: float) -> str:
    if d_device < d_golden:
        return "device"
    return "CPU golden" if d_golden < d_device else "neither (equal)"


class Diagnostic:
    """Collects the float64 diagnostic of a case's failing samples and records it on the case:
    details.float64 (which side is closer, how often, and both distances), metrics
    float64_device_distance and float64_golden_distance (the max over the diagnosed samples)."""

    def __init__(self, op, dtype, check: str, variant: str):
        self.op, self.dtype, self.check, self.variant = op, dtype, check, variant
        self.why_not = unavailable(op, dtype, check)
        self.found = []  # (device distance, golden distance) per diagnosed sample

    def sample(self, sample, outcome) -> str:
        """The text to append to a failing sample's line ("" when it has no diagnostic)."""
        if self.why_not or outcome.kept is None or len(self.found) >= MAX_SAMPLES:
            return ""
        try:
            d_device, d_golden = distances(self.op, sample, self.dtype, self.check, self.variant, outcome.kept)
        except Exception as e:  # noqa: BLE001  (the op has no float64 path for this sample)
            return f"; float64: not computed ({type(e).__name__})"
        self.found.append((d_device, d_golden))
        return f"; float64: device off by {d_device:.3g}, CPU golden by {d_golden:.3g}: " \
               f"{closer(d_device, d_golden)} closer"

    def record(self, case: dict) -> None:
        if self.why_not:
            case["details"]["float64"] = f"no float64 diagnostic: {self.why_not}"
            return
        if not self.found:
            return
        d_device = max(d for d, _ in self.found)
        d_golden = max(g for _, g in self.found)
        votes = [closer(d, g) for d, g in self.found]
        tally = ", ".join(f"{side} in {votes.count(side)}" for side in dict.fromkeys(votes))
        case["details"]["float64"] = (f"closer to the float64 CPU result: {tally} of {len(votes)} diagnosed failing "
                                      f"sample(s); max distance: device {d_device:.3g}, CPU golden {d_golden:.3g}")
        case["metrics"].update(float64_device_distance=d_device, float64_golden_distance=d_golden)
