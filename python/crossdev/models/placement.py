"""Copies of a CPU model and its inputs in a dtype and on a device. The dtype conversion happens on
the CPU first, so every device starts from bit-identical values (rounding is not a device's error)."""
from __future__ import annotations

import copy


def convert(value, device, dtype=None):
    """Tensors anywhere in `value` (tuples, lists, dicts), detached, floating ones in `dtype`, on `device`."""
    import torch
    from torch.utils._pytree import tree_map

    def move(t):
        if not isinstance(t, torch.Tensor):
            return t
        t = t.detach()
        if dtype is not None and t.is_floating_point():
            t = t.to(dtype)
        return t.to(device)

    return tree_map(move, value)


def model_copy(model, device, dtype=None):
    """A deep copy of the CPU model in `dtype` (floating parameters and buffers) on `device`."""
    twin = copy.deepcopy(model)
    if dtype is not None:
        twin.to(dtype=dtype)
    return twin.to(device)
