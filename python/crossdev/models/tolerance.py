"""When a device's tensor agrees with the CPU golden (docs/models.md, "Tolerance").

Two rules, either passes:
1. crossdev's per-dtype table (crossdev.parity.compare: torch.testing.assert_close's defaults), the
   device against the CPU golden in the same dtype;
2. the float64 rule (crossdev/float64_rule.py, shared with the opinfo suite): the device is no
   further from a float64 CPU run than float64_rule.FACTOR times the CPU golden itself is. Rounding
   error grows with depth, and so does the CPU's own error against float64, so this bound grows
   layer by layer as the expected error does; a wrong kernel's error does not shrink to the CPU's
   rounding level and fails it.
"""
from __future__ import annotations

from dataclasses import dataclass

from crossdev import float64_rule


@dataclass
class Judgement:
    passed: bool
    max_abs: float  # device against the CPU golden
    max_rel: float
    max_ulp: float
    device_vs_float64: float  # max |device - float64 reference| (nan without a reference)
    golden_vs_float64: float  # max |CPU golden - float64 reference|
    rule: str  # which rule passed, or why it failed
    by_float64_rule: bool = False  # passed by the float64 rule alone (outside the dtype's tolerance)

    def describe(self) -> str:
        text = f"max_abs {self.max_abs:.3g}, max_rel {self.max_rel:.3g}"
        # (the float64 rule's own words say both distances when it was needed)
        if self.device_vs_float64 == self.device_vs_float64 and self.passed and not self.by_float64_rule:
            text += f", vs float64 {self.device_vs_float64:.3g} (CPU's own {self.golden_vs_float64:.3g})"
        return f"{text}: {self.rule}"


def _max_abs_diff(a, b) -> float:
    if a.numel() == 0:
        return 0.0
    return float((a.double() - b.double()).abs().max()) if a.is_floating_point() or b.is_floating_point() \
        else float((a != b).any())


def judge(actual, golden, reference=None) -> Judgement:
    """The device's tensor against the CPU golden (same dtype), with the float64 run if any."""
    from crossdev import parity

    actual = actual.detach().cpu()
    golden = golden.detach().cpu()
    if actual.shape != golden.shape or actual.dtype != golden.dtype:
        return Judgement(False, float("inf"), float("inf"), float("inf"), float("nan"), float("nan"),
                         f"shape/dtype {tuple(actual.shape)} {actual.dtype} != golden {tuple(golden.shape)} {golden.dtype}")
    verdict = parity.compare(actual, golden)
    nan = float("nan")
    device_error = golden_error = nan
    if reference is not None and golden.is_floating_point():
        reference = reference.detach().cpu()
        device_error = _max_abs_diff(actual, reference)
        golden_error = _max_abs_diff(golden, reference)
    tol = f"rtol={verdict['rtol']:g}, atol={verdict['atol']:g}"
    if verdict["passed"]:
        passed, rule = True, f"within {golden.dtype} tolerance ({tol})"
    elif float64_rule.within(device_error, golden_error):  # False when either is nan
        return Judgement(True, float(verdict["max_abs"]), float(verdict["max_rel"]), float(verdict["max_ulp"]),
                         device_error, golden_error,
                         f"{verdict['mismatches']}/{verdict['total']} elements outside {tol}, passed by the "
                         f"float64 rule: {float64_rule.explain(device_error, golden_error)}", by_float64_rule=True)
    else:
        passed = False
        rule = f"{verdict['mismatches']}/{verdict['total']} elements outside {tol}"
        if golden_error == golden_error:
            rule += f" and the float64 rule fails: {float64_rule.explain(device_error, golden_error)}"
    return Judgement(passed, float(verdict["max_abs"]), float(verdict["max_rel"]), float(verdict["max_ulp"]),
                     device_error, golden_error, rule)


def judge_all(actual, golden, reference=None):
    """[(index, Judgement)] for the tensors of three structures flattened alike (non-tensors skipped)."""
    import torch
    from torch.utils._pytree import tree_flatten

    a, g = tree_flatten(actual)[0], tree_flatten(golden)[0]
    r = tree_flatten(reference)[0] if reference is not None else [None] * len(g)
    if len(a) != len(g):
        return [(0, Judgement(False, float("inf"), float("inf"), float("inf"), float("nan"), float("nan"),
                              f"{len(a)} values != golden's {len(g)}"))]
    out = []
    for i, (x, y, z) in enumerate(zip(a, g, r)):
        if isinstance(y, torch.Tensor) and isinstance(x, torch.Tensor):
            out.append((i, judge(x, y, z if isinstance(z, torch.Tensor) else None)))
    return out
