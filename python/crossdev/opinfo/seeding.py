"""Seeding for the opinfo suite's samples, without torch.manual_seed's cost.

torch.manual_seed also calls torch.cuda/xpu/mtia.manual_seed_all; with those runtimes uninitialised
(a CPU host, a sim run) each call queues a lambda with a formatted stack trace (torch.cuda._lazy_call),
and grows a queue that is never drained. In a profile of the worker (2026-11-26, ops a* to f*) torch.manual_seed
took about half of the run, mostly formatting those traces; about half of the calls were the suite's own,
removed here (op_db's sample generators still make theirs). The samples draw from the CPU generator; a device draws from
its own generators, seeded here when its runtime is up (sim: crossdev.sim's device module)."""
from __future__ import annotations


def seed(value: int, device_type: str | None = None) -> None:
    import torch

    torch.default_generator.manual_seed(value)
    if device_type in (None, "cpu"):
        return
    module = getattr(torch, device_type, None)
    initialized = getattr(module, "is_initialized", None)
    if module is not None and hasattr(module, "manual_seed_all") and (initialized is None or initialized()):
        module.manual_seed_all(value)
