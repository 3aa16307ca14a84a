"""The tolerance of a case, and where it came from: crossdev's per-dtype table (assert_close's
defaults, conformance/parity/tolerance.cpp), then op_db's own toleranceOverride or precisionOverride
for the case's reference test (op_db_decorators.py), which can only raise it (as PyTorch's assertEqual
takes the max of both)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float
    source: str

    def describe(self) -> str:
        return f"rtol={self.rtol:g}, atol={self.atol:g} ({self.source})"


def crossdev_default(dtype) -> Tolerance:
    from crossdev import parity  # the one table: the compiled comparator's
    rtol, atol = parity.default_tolerance(dtype)
    return Tolerance(rtol, atol, "crossdev per-dtype table")


def tolerance_for(op, kind: str, dtype, rules=None) -> Tolerance:
    """crossdev's table, raised (never lowered) by op_db's toleranceOverride/precisionOverride that apply to
    `kind`'s reference test of this op (op_db_decorators.py: test_compare_cpu, or TestConsistency for mps;
    decorators of other tests do not count), as PyTorch's assertEqual takes the larger of both."""
    from .op_db_decorators import rules_for

    base = crossdev_default(dtype)
    rules = rules if rules is not None else rules_for(op, kind, dtype)
    if not rules.tolerances:
        return base
    atol = max(a for a, _, _ in rules.tolerances)
    rtol = max((r for _, r, _ in rules.tolerances if r is not None), default=0.0)
    where = "; ".join(w for _, _, w in rules.tolerances)
    if atol <= base.atol and rtol <= base.rtol:
        return Tolerance(base.rtol, base.atol, f"{base.source}; {where} is not looser")
    return Tolerance(max(rtol, base.rtol), max(atol, base.atol), where)
