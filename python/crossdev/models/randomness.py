"""Seed policies for a forward that draws random numbers (docs/models.md, "Random forwards").

Devices' random streams differ by design, so a random forward (dropout in train mode) cannot be
compared as it is. `none` (the default) refuses it: the case says so. `same_mask` replays the same
masks everywhere: every random draw of a run (aten::bernoulli, aten::bernoulli_,
aten::native_dropout) is replaced, on the CPU golden, the float64 reference and each device, by a
mask drawn on the CPU from a seed fixed per draw (the k-th draw of a run uses MASK_SEED + k), so
the k-th dropout of every run drops the same elements whichever kernel the device dispatches to
(the CPU decomposes dropout into bernoulli_, PrivateUse1/CUDA call native_dropout)."""
from __future__ import annotations

import contextlib

from torch.utils._python_dispatch import TorchDispatchMode

from crossdev import python_suites

from .ops import draws_random

SEED_POLICIES = python_suites.choices("models", "seed_policy")  # python_suites.json: the engine checks them too
MASK_SEED = 0
REPLAYED = ("aten::bernoulli", "aten::bernoulli_", "aten::native_dropout")


class RandomnessError(RuntimeError):
    """A random op the same_mask policy cannot replay."""


def check_policy(policy: str) -> str:
    if policy not in SEED_POLICIES:
        raise ValueError(f"unknown seed policy '{policy}'; expected one of {', '.join(SEED_POLICIES)}")
    return policy


class SameMasks(TorchDispatchMode):
    """`with SameMasks(start=k):` the random draws inside, from the k-th on, replayed from the CPU."""

    def __init__(self, start: int = 0):
        super().__init__()
        self.position = start

    def _keep(self, shape, keep_probability):
        """The next draw's mask (bool, CPU): True where an element is kept (probability of a 1)."""
        import torch
        generator = torch.Generator().manual_seed(MASK_SEED + self.position)
        self.position += 1
        if isinstance(keep_probability, torch.Tensor):
            keep_probability = keep_probability.detach().to("cpu", torch.float64)
        return torch.rand(tuple(shape), generator=generator, dtype=torch.float64) < keep_probability

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if not draws_random(func, args, kwargs):
            return func(*args, **kwargs)
        name = func._schema.name
        if name == "aten::bernoulli_":  # (self, p=0.5): p a float or a tensor of probabilities
            target = args[0]
            p = args[1] if len(args) > 1 else kwargs.get("p", 0.5)
            return target.copy_(self._keep(target.shape, p).to(target.dtype).to(target.device))
        if name == "aten::bernoulli":  # (self) with self the probabilities, or bernoulli.p(self, p)
            source = args[0]
            p = (args[1] if len(args) > 1 else kwargs.get("p")) if func._overloadname == "p" else source
            return self._keep(source.shape, p).to(source.dtype).to(source.device)
        if name == "aten::native_dropout":  # (input, p, train) -> (output, mask)
            source, p = args[0], args[1]
            keep = 1.0 - p
            mask = self._keep(source.shape, keep).to(source.device)
            return source * mask * (1.0 / keep), mask
        raise RandomnessError(f"seed_policy same_mask replays dropout's masks ({', '.join(REPLAYED)}); the forward "
                              f"draws {name}, which it cannot replay: build the model without it (or in eval())")


def masks(policy: str, start: int = 0):
    """The context a run executes in under `policy`: SameMasks from draw `start`, or nothing."""
    return SameMasks(start) if policy == "same_mask" else contextlib.nullcontext()


def position(context) -> int:
    """How many draws the run has replayed so far (0 without a policy)."""
    return getattr(context, "position", 0)
