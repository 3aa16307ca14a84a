"""Seeding for the opinfo suite's samples, without torch.manual_seed's cost.

torch.manual_seed also calls torch.cuda/xpu/mtia.manual_seed_all; with those runtimes uninitialised
(a CPU host, a sim run) each call queues a lambda with a formatted stack trace (torch.cuda._lazy_call),
and grows a queue that is never drained. In a profile of the worker (2026-11-26, ops a* to f*) torch.manual_seed
took about half of the run, mostly formatting those traces; about half of the calls were the suite's own,
removed here (op_db's sample generators still make theirs). The samples draw from the CPU generator; a device draws from
its own generators, seeded here when its runtime is up (sim: crossdev.sim's device module).

op_db's sample iterators call torch.manual_seed before every sample (common_utils.set_rng_seed), so a
worker also replaces torch.manual_seed (skip_lazy_seeding) where none of those runtimes can start.
The seed they set comes from common_utils.extract_test_fn, which walks the whole stack with
inspect.stack() (reading a source line per frame) on every sample_inputs call looking for a running
unittest.TestCase; a worker runs none, so the seed is always common_utils.SEED (skip_test_fn_lookup)."""
from __future__ import annotations

LAZY_RUNTIMES = ("cuda", "xpu", "mtia")  # torch.manual_seed queues a lazy seed for each while uninitialised


def seed(value: int, device_type: str | None = None) -> None:
    import torch

    torch.default_generator.manual_seed(value)
    if device_type in (None, "cpu"):
        return
    module = getattr(torch, device_type, None)
    initialized = getattr(module, "is_initialized", None)
    if module is not None and hasattr(module, "manual_seed_all") and (initialized is None or initialized()):
        module.manual_seed_all(value)


def skip_lazy_seeding() -> bool:
    """In this process, torch.manual_seed(s) seeds what it always does (the CPU generator, mps where built,
    the PrivateUse1 backend: sim) but queues no lazy seed for cuda, xpu and mtia when none of them is
    available: their queue only ever runs when the runtime initialises, which an unavailable one never
    does, so the generators' states are the same. Where one is available, torch's own is kept. Returns
    whether it was replaced."""
    import torch
    import torch.random

    if getattr(torch.manual_seed, "crossdev_skips_lazy_seeding", False):
        return True
    if any(getattr(torch, name).is_available() for name in LAZY_RUNTIMES):
        return False

    def manual_seed(value):
        value = int(value)
        torch.mps.manual_seed(value)
        torch.random._seed_custom_device(value)
        return torch.default_generator.manual_seed(value)

    manual_seed.crossdev_skips_lazy_seeding = True
    manual_seed.__doc__ = torch.manual_seed.__doc__
    torch.manual_seed = manual_seed
    return True


def skip_test_fn_lookup() -> None:
    """op_db's sample iterators (common_utils.TrackedInputIter) seed each sample from the running
    unittest test's name, found by extract_test_fn walking the stack; with none (a crossdev worker
    never runs inside a unittest.TestCase) it returns None and they seed with common_utils.SEED. Here it
    returns None without the walk: the same seeds. OpInfo.sample_inputs also asks it (opinfo.core imports
    it by name) for the test's sample_skips_and_xfails: None there too. The walk is dearest in a
    `python -m` process, whose frames inspect.getmodule cannot map from its cache: each one scans every
    module (thousands once op_db is imported). Call it only in a process that runs no unittest test."""
    from torch.testing._internal import common_utils
    from torch.testing._internal.opinfo import core

    def no_test_fn():
        return None
    common_utils.extract_test_fn = core.extract_test_fn = no_test_fn


def fast_op_db_sampling() -> None:
    """The worker's setup before its cases: skip_lazy_seeding and skip_test_fn_lookup."""
    skip_lazy_seeding()
    skip_test_fn_lookup()
