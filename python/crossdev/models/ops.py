"""The ATen ops one piece of code runs, in order, with copies of their outputs (a TorchDispatchMode,
so the ops are the ones after autograd and composite decomposition: aten::gelu, aten::addmm, ...)."""
from __future__ import annotations

from dataclasses import dataclass

from torch.utils._python_dispatch import TorchDispatchMode


@dataclass
class OpRecord:
    name: str  # aten::gelu (the schema's name; the overload is left out)
    outputs: list  # tensors, detached copies on the CPU
    random: bool  # tagged nondeterministic_seeded: draws random numbers
    func: object = None  # the OpOverload (keep_inputs)
    inputs: object = None  # (args, kwargs) as the op received them, tensors copied to the CPU first (keep_inputs)


class OpRecorder(TorchDispatchMode):
    """keep_inputs: each op's overload and a CPU copy of its arguments, taken before it runs (an in-place op
    changes them): what `crossdev repro` needs to call the first divergent op alone (docs/repro.md)."""

    def __init__(self, keep_outputs: bool = True, keep_inputs: bool = False):
        super().__init__()
        self.keep_outputs = keep_outputs
        self.keep_inputs = keep_inputs
        self.ops: list[OpRecord] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        import torch
        from torch.utils._pytree import tree_flatten, tree_map
        inputs = tree_map(lambda t: t.detach().to("cpu", copy=True) if isinstance(t, torch.Tensor) else t,
                          (tuple(args), dict(kwargs or {}))) if self.keep_inputs else None
        out = func(*args, **(kwargs or {}))
        kept = []
        if self.keep_outputs:
            kept = [t.detach().to("cpu", copy=True) for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor)]
        self.ops.append(OpRecord(func._schema.name, kept, draws_random(func, args, kwargs or {}),
                                 func if self.keep_inputs else None, inputs))
        return out


# Arguments that switch a tagged op's randomness off: dropout probability 0, or not training.
_OFF_SWITCHES = {"dropout_p": 0.0, "p": 0.0, "train": False}


def draws_random(func, args, kwargs) -> bool:
    """Tagged nondeterministic_seeded, unless a dropout probability of 0 or train=False makes it
    deterministic (SDPA's kernels carry the tag for their dropout_p)."""
    import torch
    if torch.Tag.nondeterministic_seeded not in func.tags:
        return False
    for i, argument in enumerate(func._schema.arguments):
        if argument.name in _OFF_SWITCHES:
            value = args[i] if i < len(args) else kwargs.get(argument.name, argument.default_value)
            if value == _OFF_SWITCHES[argument.name]:
                return False
    return True


def random_ops(records) -> list[str]:
    """Names of the recorded ops that draw random numbers, each once."""
    return list(dict.fromkeys(r.name for r in records if r.random))
