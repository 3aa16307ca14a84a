"""Outputs whose values the contract leaves open, and random ops. One table, each entry with its reason
(docs/opinfo.md, "Values left open"):

- OPEN_VALUES: uninitialized memory; with op_db's has_nondeterministic_output and random ops, compared on
  shape, dtype and layout only (metadata_only_reason);
- OPEN_ORDER: outputs whose *order* is open: each side's result is put in a canonical form before the
  comparator sees it (comparable), so the values are still compared, and every index the op returns is
  checked to be a valid one that produces those values:
    sort / argsort, unstable (stable not True): the order of ties. Values are compared as they are; the
      indices are replaced by (input.gather(dim, indices), indices sorted along dim): the values they pick
      must be the sorted values, and sorted they must be 0..n-1 on every line (a permutation);
    unique(sorted=False) (dim None): the order of the unique values. Compared sorted; the inverse is
      replaced by unique[inverse] (it must rebuild the input) and the counts follow the sort.
  Forward only: a backward case gives a tie's gradient by position, compared as it is."""
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


# --- order left open: canonical forms -------------------------------------------------------------
def _argument(sample, position: int, name: str, default):
    if name in sample.kwargs:
        return sample.kwargs[name]
    return sample.args[position] if len(sample.args) > position else default


def _sort_applies(sample) -> bool:
    return _argument(sample, 2, "stable", False) is not True


def _indices_form(sample, indices):
    """(the values the indices pick, the indices sorted along dim): both must match the CPU's."""
    dim = _argument(sample, 0, "dim", -1)
    if indices.dim() == 0:
        return sample.input.detach().reshape(()), indices
    return sample.input.detach().gather(dim, indices), indices.sort(dim).values


def _sort_form(sample, result):
    values, indices = result
    return (values, *_indices_form(sample, indices))


def _argsort_form(sample, result):
    return _indices_form(sample, result)


def _unique_applies(sample) -> bool:
    return sample.kwargs.get("sorted", True) is False and sample.kwargs.get("dim") is None


def _unique_form(sample, result):
    parts = list(result) if isinstance(result, (tuple, list)) else [result]
    unique = parts.pop(0)
    inverse = parts.pop(0) if sample.kwargs.get("return_inverse") else None
    counts = parts.pop(0) if sample.kwargs.get("return_counts") else None
    ordered, perm = unique.sort()
    form = [ordered]
    if inverse is not None:
        form.append(unique[inverse])  # rebuilds the input, whatever order the unique values came in
    if counts is not None:
        form.append(counts[perm])
    return tuple(form)


# (glob over the OpInfo's full name, does this sample's call leave the order open, canonical form, reason)
OPEN_ORDER = (
    ("sort", _sort_applies, _sort_form,
     "an unstable sort may order equal values either way: values compared; indices checked to pick those "
     "values and to be a permutation"),
    ("argsort", _sort_applies, _argsort_form,
     "an unstable sort may order equal values either way: indices checked to pick the sorted values and "
     "to be a permutation"),
    ("unique", _unique_applies, _unique_form,
     "unique(sorted=False) leaves the order of the unique values open: compared sorted; the inverse checked "
     "to rebuild the input, counts in the same order"),
)


def open_order_reason(name: str) -> str | None:
    """Why some samples of this op are compared in a canonical order, or None."""
    return next((reason for glob, _, _, reason in OPEN_ORDER if fnmatch.fnmatchcase(name, glob)), None)


def comparable(name: str, cpu_sample, device_sample, actual, expected):
    """(actual, expected) in the canonical form of OPEN_ORDER where this sample leaves the order open,
    each side's form computed from its own input; unchanged otherwise."""
    for glob, applies, form, _ in OPEN_ORDER:
        if fnmatch.fnmatchcase(name, glob) and applies(cpu_sample):
            return form(device_sample, actual), form(cpu_sample, expected)
    return actual, expected
