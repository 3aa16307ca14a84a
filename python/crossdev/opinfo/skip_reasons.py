"""Why an opinfo or models case is `skip`: one table (the case's details.skip_reason is a key of it), counted by reason in
the report's summary ("Skips by reason") so that a case that stopped running is seen, not lost in a total."""
from __future__ import annotations

SKIP_REASONS = {
    "device_absent": "the device kind is not on this host",
    "expectation": "an expectation entry skips it",
    "variant_missing": "op_db's OpInfo has no such form (in-place, out=), or out= with backward",
    "no_golden": "op_db: the CPU does not support the dtype or autograd, so there is no golden",
    "declared_gap": "op_db declares the op unsupported on the device kind (its dtypes, onlyCPU, ...)",
    "op_db_skip": "op_db's unittest.skip for the reference test",
    "no_elements": "no sample had elements: nothing to compare",
    "golden_raised": "every sample raised on the CPU golden",
    "package_absent": "a package the row requires (models: `requires`) is not installed",
}


def mark(case: dict, reason: str) -> dict:
    """Record the case's skip reason (a key of SKIP_REASONS) in details.skip_reason."""
    assert reason in SKIP_REASONS, reason
    case.setdefault("details", {})["skip_reason"] = reason
    return case
