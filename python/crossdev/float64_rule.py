"""The float64 rule: one verdict for a result outside tolerance, shared by the opinfo and models suites.

A device result that differs from the CPU golden beyond the dtype's tolerance still passes when the
device is no farther from a float64 CPU run of the same computation than FACTOR times the CPU golden
itself is. Two correct implementations (another accumulation order, a fused kernel, a blocked
reduction) each carry their own rounding error, of the same order of magnitude but not the same
size; whichever is closer to exact, neither is wrong. A kernel that computes something else (a wrong
formula, an off-by-one, a dropped term) is far beyond the CPU's rounding level and fails.

Why FACTOR = 4 (docs/opinfo.md, "The float64 rule"):
- PyTorch's own reference check (test/test_ops.py, `_ref_test_helper`) passes a torch result that
  differs from its reference when the reference is no closer to a higher-precision run than the
  torch result: a factor of 1, against a *reference* implementation that is never expected to be the
  less accurate one. Here neither side is the reference: the device and the CPU are peers, and
  which one rounds less on a given sample is chance (the H200 bundle of 2026-11-27 has samples
  either way). A factor of 1 fails householder_product's backward on a healthy Xeon, where the
  composite kernel is 0.00185 from float64 and the CPU golden 0.00178 (1.04x).
- Worst-case rounding bounds of two valid summation orders of n terms differ by small constant
  factors (pairwise log2(n) vs sequential n, both times the unit roundoff; typical errors sqrt of
  those), so on the shapes op_db samples the ratio of two correct results' errors stays within a
  few units; 4 is the factor crossdev's models suite has used since its first release
  (python/crossdev/models/tolerance.py took it from here since).
- A genuine error is orders of magnitude beyond: eigenvalues 1% off, a TF32 convolution (0.02 to
  0.23 from float64 where the CPU is 1.3e-4: 150x and more) fail it.
Element by element (opinfo): the rule judges each element outside the dtype's tolerance on its own, against
the CPU golden's distance from float64 *for that element*, or the golden's worst relative error on the sample
applied to the element's magnitude (two valid orders of accumulation round the same element
differently: the golden may be exact by chance where the device is not; result_rel is the golden's worst
relative error over the whole result), with a floor of FLOOR_ULPS units in
the last place of the float64 value in the case's dtype; any element may also be as far off as the golden's
worst element of the same tensor (not 4x it, and not another tensor's), and an element that is zero to within
the golden's largest error as far as that error (within_elementwise). A sample-wide maximum
let any one element be off by FACTOR times the CPU's largest error anywhere in the sample: for pow's backward
(CPU golden 13.2 from float64 on its largest element) a gradient element 20 returned as -20 passed; element
by element it fails (tests/mutants/aten/pow_smallest_element_negated.cpp).
The rule never applies to values the contract leaves open (random ops, uninitialized memory): those
have no float64 result to be close to.
"""
from __future__ import annotations

import math

FACTOR = 4.0
# The float64 run arbitrates only where it is a reference: the CPU golden within this fraction of the result's
# scale (max |float64 result|). Rounding, however accumulated, stays far below it; an answer the contract leaves
# ambiguous (an eigenvector's sign, a permutation) puts the golden and the float64 run on different branches,
# O(1) apart, where "closer to float64" means nothing and the rule must not pass anything.
REFERENCE_REL = 1e-2
FLOOR_ULPS = 4  # an element the CPU golden computes exactly: the device may be this many ULP of the dtype away
REFERENCE_ATOL = 1e-3  # below it a distance is rounding-level whatever the scale (a result near 0: layer_norm's 1-element rows)
SOURCE = "the float64 rule (python/crossdev/float64_rule.py): the device within 4x the CPU golden's own " \
         "distance from a float64 CPU run"


def within(device_distance: float, golden_distance: float, scale: float = math.inf) -> bool:
    """Whether the device's distance from float64 is within FACTOR times the CPU golden's, the float64 run
    being a reference (golden_distance <= REFERENCE_REL * scale). False when either is NaN or the golden is
    exact and the device is not (0 <= 4 * 0 holds only at 0)."""
    if math.isnan(device_distance) or math.isnan(golden_distance):
        return False
    if not is_reference(golden_distance, scale):
        return False
    return device_distance <= FACTOR * golden_distance


def within_elementwise(device_gap, golden_gap, ulp, outside, exact_abs, result_gap: float, result_rel: float) -> tuple:
    """(passes, elements judged, elements beyond, index of the worst element or None) for one tensor of a result:
    `device_gap` and `golden_gap` are |side - float64| per element, `ulp` one unit in the last place of the
    float64 value in the case's dtype, `outside` the elements outside the dtype's tolerance (only they are
    judged: the others already agree), `exact_abs` |float64 value|, `result_gap` the golden's largest distance
    over the whole result, `result_rel` its largest relative error (the largest, over the result's tensors, of
    a tensor's largest gap over that tensor's scale): the CPU's relative accuracy on this sample. An element
    passes when

        device_gap <= max(FACTOR * local + FLOOR_ULPS * ulp, the golden's largest gap in this tensor),
        local = max(the golden's gap at this element, result_rel * |float64 value of this element|):

    any element may be as far off as the CPU's worst element of the same tensor (a sum that cancels is rounded
    differently by another order: pow's exponent gradient, stft's window gradient), and beyond that within
    FACTOR of the CPU's own error there,

    and, for an element that is zero to the CPU's own rounding (|float64| <= min(result_gap, REFERENCE_ATOL):
    a sum that cancels, layer_norm's gradient over one element), local is at least result_gap. A NaN gap on one
    side only (inf) never passes."""
    import torch

    local = torch.maximum(golden_gap, result_rel * exact_abs.nan_to_num(nan=0.0, posinf=0.0))
    zero = exact_abs <= min(result_gap, REFERENCE_ATOL)
    local = torch.where(zero, torch.clamp(local, min=result_gap), local)
    finite = golden_gap[golden_gap.isfinite()]
    tensor_gap = float(finite.max()) if finite.numel() else 0.0
    bound = torch.clamp(FACTOR * local + FLOOR_ULPS * ulp, min=tensor_gap)
    beyond = outside & ~(device_gap <= bound)
    judged = int(outside.sum())
    count = int(beyond.sum())
    if not count:
        return True, judged, 0, None
    excess = torch.where(beyond, (device_gap - bound).nan_to_num(nan=float("inf")), torch.zeros_like(bound))
    return False, judged, count, int(excess.reshape(-1).argmax())


def is_reference(golden_distance: float, scale: float) -> bool:
    """Whether the float64 run is a reference for this result: the CPU golden within REFERENCE_REL of the
    result's scale, or within REFERENCE_ATOL."""
    return golden_distance <= max(REFERENCE_REL * scale, REFERENCE_ATOL)


def explain(device_distance: float, golden_distance: float, scale: float = math.inf) -> str:
    """'device 0.00185 from float64, CPU golden 0.00178: within 4x' (or 'beyond 4x', or why float64 is no
    reference here)."""
    head = f"device {device_distance:.3g} from float64, CPU golden {golden_distance:.3g}"
    if not math.isnan(golden_distance) and not is_reference(golden_distance, scale):
        return f"{head}: the float64 run is no reference (the golden is {golden_distance:.3g} from it, beyond " \
               f"{REFERENCE_REL:g} of the result's scale {scale:.3g})"
    verdict = "within" if within(device_distance, golden_distance, scale) else "beyond"
    return f"{head}: {verdict} {FACTOR:g}x"
