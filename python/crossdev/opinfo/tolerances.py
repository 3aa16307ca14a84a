"""The tolerance of a case, and where it came from: crossdev's per-dtype table (assert_close's
defaults, conformance/parity/tolerance.cpp), then op_db's own toleranceOverride for the device
type, which can only raise it (as PyTorch's assertEqual takes the max of both)."""
from __future__ import annotations

from dataclasses import dataclass

# The op_db tests whose overrides speak about a device's result against a reference, best first:
# TestConsistency (test_mps.py) compares a device with the CPU, exactly this suite's question.
PREFERRED_TESTS = ("TestConsistency", "TestCommon")


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


def op_db_override(op, device_type: str, dtype):
    """(atol, rtol, source) of the op_db toleranceOverride that applies, or None."""
    from torch.testing._internal.common_device_type import toleranceOverride

    found = []
    for info in getattr(op, "decorators", ()) or ():
        if not hasattr(info, "decorators") or info.device_type not in (None, device_type):
            continue
        if info.dtypes is not None and dtype not in info.dtypes:
            continue
        for dec in info.decorators:
            if isinstance(dec, toleranceOverride) and dtype in dec.d:
                rank = (info.device_type != device_type,
                        PREFERRED_TESTS.index(info.cls_name) if info.cls_name in PREFERRED_TESTS else len(PREFERRED_TESTS))
                where = f"op_db toleranceOverride {info.cls_name or '*'}.{info.test_name or '*'}, " \
                        f"device_type={info.device_type or '*'}"
                found.append((rank, dec.d[dtype].atol, dec.d[dtype].rtol, where))
    if not found:
        return None
    found.sort(key=lambda f: f[0])
    return found[0][1:]


def tolerance_for(op, device_type: str, dtype) -> Tolerance:
    base = crossdev_default(dtype)
    override = op_db_override(op, device_type, dtype)
    if override is None:
        return base
    atol, rtol, where = override
    if atol <= base.atol and rtol <= base.rtol:
        return Tolerance(base.rtol, base.atol, f"{base.source}; {where} is not looser")
    return Tolerance(max(rtol, base.rtol), max(atol, base.atol), where)
