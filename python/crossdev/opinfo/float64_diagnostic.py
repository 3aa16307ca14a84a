"""The float64 diagnostic of a failing sample (docs/opinfo.md): the golden is the CPU in the case's
dtype; the same sample run on the CPU in float64 (complex128 for complex dtypes) says which side,
the device or the CPU golden, is closer to exact, and by how much, and decides the sample by the float64
rule (crossdev.float64_rule). Computed only for the samples outside tolerance, so a passing sweep pays
nothing for it."""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch.utils._pytree import tree_flatten

from . import samples

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


def _perturbed(sample, dtype, seed: int):
    """`sample` with every tensor of the case's dtype multiplied by (1 + d), d uniform in [-eps, eps] of the dtype
    per element (a fixed generator): inputs one rounding away from the sample's."""
    generator = torch.Generator().manual_seed(seed)
    eps = torch.finfo(dtype).eps if dtype.is_floating_point else 0.0

    def nudge(t):
        if not isinstance(t, torch.Tensor) or t.dtype != dtype or t.layout != torch.strided:
            return t
        d = (torch.rand(t.shape, generator=generator, dtype=torch.float64) * 2 - 1) * eps
        return (t.detach().to(torch.float64) * (1 + d)).to(dtype).requires_grad_(t.requires_grad)
    return sample.transform(nudge)


PERTURBATIONS = 2  # CPU runs on perturbed inputs: each element's sensitivity to one rounding


def _exact(op, sample, dtype, check: str, variant: str, grad_outputs, widen: bool = True):
    """The float64 CPU result of `sample` (or, widen=False, the result in the sample's own dtype): its outputs
    (forward) or its gradients (backward), through op_db's output_process_fn_grad as the compared results were."""
    wide_sample = _widen(sample, dtype) if widen else sample
    if check == "forward":
        template = samples._call(op, wide_sample) if variant == "out" else None
        return samples.processed(wide_sample, samples._call(op, wide_sample, variant, template, "cpu"), op)
    outputs = [t for t in tree_flatten(samples.processed(wide_sample, samples._call(op, wide_sample, variant), op))[0]
               if isinstance(t, torch.Tensor) and t.requires_grad]
    grads = [g.to(o.dtype) for g, o in zip(grad_outputs, outputs)]
    return list(torch.autograd.grad(outputs, samples._grad_inputs(wide_sample), grads, allow_unused=True))


def _sensitivities(op, sample, dtype, check: str, variant: str, kept: samples.Kept) -> list:
    """Per compared tensor, how far the CPU's own result moves, element by element, when the inputs move by one
    rounding (the largest over PERTURBATIONS runs), or None where it cannot be had: the rounding noise each element
    carries (large where a sum cancels: pow's exponent gradient, stft's window gradient; one ULP for an
    elementwise op)."""
    golden = tree_flatten(kept.expected)[0]
    found = [None] * len(golden)
    for k in range(PERTURBATIONS):
        try:
            moved = tree_flatten(_exact(op, _perturbed(sample, dtype, 20_261_129 + k), dtype, check, variant,
                                        kept.grad_outputs, widen=False))[0]
        except Exception:  # noqa: BLE001  (the op rejects the nudged inputs: no estimate)
            return [None] * len(golden)
        for i, (m, e) in enumerate(zip(moved, golden)):
            if isinstance(m, torch.Tensor) and isinstance(e, torch.Tensor) and m.shape == e.shape and \
                    (e.is_floating_point() or e.is_complex()):
                gap = _gaps(m, e.detach().to(torch.complex128 if e.is_complex() else torch.float64))
                found[i] = gap if found[i] is None else torch.maximum(found[i], gap)
    return found


def _gaps(side: torch.Tensor, exact: torch.Tensor) -> torch.Tensor:
    """|side - exact| per element, equal values (infinities, NaN on both) at 0, a NaN on one side only at inf."""
    side = side.detach().to("cpu", exact.dtype)
    same = (side == exact) | (side.isnan() & exact.isnan())
    return (side - exact).abs().masked_fill(same, 0).nan_to_num(nan=float("inf"), posinf=float("inf"))


def _ulp(exact: torch.Tensor, dtype) -> torch.Tensor:
    """One unit in the last place of each float64 value in the case's dtype (its smallest normal near 0)."""
    info = torch.finfo(dtype if dtype.is_floating_point else torch.float32)
    magnitude = exact.abs().nan_to_num(nan=0.0, posinf=0.0).clamp(min=info.tiny)
    return torch.exp2(torch.floor(torch.log2(magnitude))) * info.eps


def _outside(actual: torch.Tensor, expected: torch.Tensor, tol) -> torch.Tensor:
    """The elements outside assert_close's tolerance (|a - e| > atol + rtol |e|; NaN equal to NaN)."""
    a = actual.detach().to("cpu", expected.dtype)
    e = expected.detach()
    if tol is None:
        return torch.ones(a.shape, dtype=torch.bool)
    same = (a == e) | (a.isnan() & e.isnan())
    close = (a - e).abs() <= tol.atol + tol.rtol * e.abs()
    return ~(same | close)


def _relative(gap: torch.Tensor, exact: torch.Tensor) -> float:
    """A tensor's largest finite gap over its scale (max |float64 value|): the side's relative accuracy on it."""
    gap, magnitude = gap[gap.isfinite()], exact.abs()[exact.abs().isfinite()]
    if not gap.numel() or not magnitude.numel() or float(magnitude.max()) == 0:
        return 0.0
    return float(gap.max()) / float(magnitude.max())


@dataclass
class Distances:
    """What the float64 run says of one failing sample: the largest distances of each side, the result's scale,
    and the element-by-element rule over the elements outside tolerance (float64_rule.within_elementwise)."""
    device: float = 0.0
    golden: float = 0.0
    scale: float = 0.0
    judged: int = 0  # elements outside tolerance
    beyond: int = 0  # of those, elements beyond the rule's bound
    worst: str = ""  # the worst element beyond: where, the three values


def measure(op, sample, dtype, check: str, variant: str, kept: samples.Kept, tol=None) -> Distances:
    """The float64 run of `sample` against both sides' compared tensors (kept), element by element."""
    from crossdev import float64_rule

    exact = tree_flatten(_exact(op, sample, dtype, check, variant, kept.grad_outputs))[0]
    device, golden = tree_flatten(kept.actual)[0], tree_flatten(kept.expected)[0]
    noise = _sensitivities(op, sample, dtype, check, variant, kept)
    found, triples = Distances(), []
    for index, (a, e, x) in enumerate(zip(device, golden, exact)):
        if not (all(isinstance(t, torch.Tensor) for t in (a, e, x)) and a.shape == e.shape == x.shape):
            continue
        x = x.detach()
        if not (x.is_floating_point() or x.is_complex()):
            continue
        gap_device, gap_golden = _gaps(a, x), _gaps(e, x)
        sensitivity = noise[index] if index < len(noise) and noise[index] is not None else torch.zeros_like(gap_golden)
        triples.append((index, a, e, x, gap_device, torch.maximum(gap_golden, sensitivity)))
        if x.numel():
            found.device = max(found.device, float(gap_device.max()))
            found.golden = max(found.golden, float(gap_golden.max()))
            finite = x.abs()[x.abs().isfinite()]
            found.scale = max(found.scale, float(finite.max()) if finite.numel() else 0.0)
    compared = len(triples)
    golden_max = found.golden if math.isfinite(found.golden) else 0.0
    golden_rel = max((_relative(gap_golden, x) for _, _, _, x, _, gap_golden in triples), default=0.0)
    for index, a, e, x, gap_device, gap_golden in triples:
        magnitude = x.abs() if x.is_complex() else x.abs()
        ulp = _ulp(magnitude, e.dtype if not e.is_complex() else e.real.dtype)
        outside = _outside(a, e, tol)
        passes, judged, beyond, worst = float64_rule.within_elementwise(gap_device, gap_golden, ulp, outside,
                                                                        magnitude.to(torch.float64), golden_max, golden_rel)
        found.judged += judged
        found.beyond += beyond
        if worst is not None and not found.worst:
            at = tuple(int(i) for i in torch.unravel_index(torch.tensor(worst), x.shape)) if x.dim() else ()
            flat = lambda t: t.detach().to("cpu").reshape(-1)[worst].item()  # noqa: E731
            found.worst = (f"[{index}]{list(at)}: device {flat(a):.6g}, CPU golden {flat(e):.6g}, float64 {flat(x):.6g}")
    if not compared:
        raise ValueError("no tensor of the float64 run matches the compared ones")
    return found


def distances(op, sample, dtype, check: str, variant: str, kept: samples.Kept, scale: list | None = None):
    """(device's, CPU golden's) max distance to the float64 result over the compared tensors; `scale`, a list,
    receives the max |float64 result| over them (the float64 rule's reference check)."""
    found = measure(op, sample, dtype, check, variant, kept)
    if scale is not None:
        scale.append(found.scale)
    return found.device, found.golden


def closer(d_device: float, d_golden: float) -> str:
    if d_device < d_golden:
        return "device"
    return "CPU golden" if d_golden < d_device else "neither (equal)"


class Diagnostic:
    """The float64 run of a case's failing samples: which side is closer to it, and the float64 rule
    (crossdev.float64_rule: a sample outside tolerance passes when the device is within FACTOR times the
    CPU golden's own distance from float64). Records on the case details.float64 (which side is closer,
    how often, and both distances), metrics float64_device_distance and float64_golden_distance (the max
    over the diagnosed samples) and float64_rule_passes (the samples the rule passed)."""

    def __init__(self, op, dtype, check: str, variant: str, tol=None):
        self.op, self.dtype, self.check, self.variant, self.tol = op, dtype, check, variant, tol
        self.why_not = unavailable(op, dtype, check)
        self.found = []  # (device distance, golden distance) per diagnosed sample
        self.passed = []  # float64_rule.explain(...) of each sample the rule passed

    def judge(self, sample, outcome) -> tuple:
        """(text to append to the sample's line, whether the float64 rule passes it). `sample` is the
        golden's (CPU) sample."""
        from crossdev import float64_rule

        if self.why_not or outcome.kept is None or getattr(outcome, "metadata_mismatch", False):
            return "", False
        try:
            found = measure(self.op, sample, self.dtype, self.check, self.variant, outcome.kept, self.tol)
        except Exception as e:  # noqa: BLE001  (the op has no float64 path for this sample)
            return f"; float64: not computed ({type(e).__name__})", False
        d_device, d_golden, scale = found.device, found.golden, found.scale
        self.found.append((d_device, d_golden))
        if not float64_rule.is_reference(d_golden, scale):
            return f"; float64: {float64_rule.explain(d_device, d_golden, scale)}", False
        if not found.beyond:
            self.passed.append(f"{found.judged} element(s) outside tolerance, each within {float64_rule.FACTOR:g}x "
                               f"the CPU golden's own distance from float64 (+{float64_rule.FLOOR_ULPS} ULP); "
                               f"max: {float64_rule.explain(d_device, d_golden, scale)}")
            return "", True
        return (f"; float64: device off by {d_device:.3g}, CPU golden by {d_golden:.3g}: {closer(d_device, d_golden)} "
                f"closer; {found.beyond} of {found.judged} element(s) outside tolerance beyond "
                f"{float64_rule.FACTOR:g}x the golden's own distance, worst {found.worst}"), False

    def sample(self, sample, outcome) -> str:
        return self.judge(sample, outcome)[0]

    def record(self, case: dict) -> None:
        if self.passed:
            first = self.passed[0]
            case["details"]["float64_rule"] = (f"{len(self.passed)} sample(s) outside tolerance passed by the float64 "
                                               f"rule; first: {first}")
            case["metrics"]["float64_rule_passes"] = len(self.passed)
        if self.why_not:
            case["details"]["float64"] = f"no float64 diagnostic: {self.why_not}"
            return
        if not self.found:
            return
        d_device = max(d for d, _ in self.found)
        d_golden = max(g for _, g in self.found)
        votes = [closer(d, g) for d, g in self.found]
        tally = ", ".join(f"{side} in {votes.count(side)}" for side in dict.fromkeys(votes))
        case["details"]["float64"] = (f"closer to the float64 CPU result: {tally} of {len(votes)} diagnosed "
                                      f"sample(s); max distance: device {d_device:.3g}, CPU golden {d_golden:.3g}")
        case["metrics"].update(float64_device_distance=d_device, float64_golden_distance=d_golden)
