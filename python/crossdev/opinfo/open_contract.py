"""Outputs whose values the contract leaves open, and random ops: both are compared on shape,
dtype and layout only. One table, each entry with its reason (docs/opinfo.md)."""
from __future__ import annotations

import fnmatch

# (glob over the OpInfo's full name, why its values cannot be compared)
OPEN_VALUES = (
    ("empty", "uninitialized memory: the contract leaves the values open"),
    ("empty_*", "uninitialized memory: the contract leaves the values open"),
    ("new_empty*", "uninitialized memory: the contract leaves the values open"),
)
RANDOM_REASON = "random op (its ATen op is tagged nondeterministic_seeded): the device's generator " \
                "need not draw the CPU's numbers"


def _is_random(op) -> bool:
    import torch

    name = (getattr(op, "aten_name", None) or op.name).split(".")[-1]
    packet = getattr(torch.ops.aten, name, None)
    if packet is None:
        return False
    try:
        return any(torch.Tag.nondeterministic_seeded in getattr(packet, o).tags for o in packet.overloads())
    except (AttributeError, RuntimeError):
        return False


def metadata_only_reason(op, name: str) -> str | None:
    """Why this op's values are not compared, or None when they are."""
    for glob, reason in OPEN_VALUES:
        if fnmatch.fnmatchcase(name, glob):
            return reason
    if getattr(op, "has_nondeterministic_output", False):
        return "op_db marks its output nondeterministic (has_nondeterministic_output)"
    if _is_random(op):
        return RANDOM_REASON
    return None
