#!/usr/bin/env python3
"""The bare loop of the OpInfo sweep benchmark (bench/python/opinfo_sweep_bench.py): the same samples
as the `opinfo` suite's sweep row, run with torch alone (CPU golden, the same call on the simulated
device, torch.testing.assert_close, and for backward torch.autograd.grad on both sides), without the
harness (no worker protocol, records, tolerance lookup, expectations or per-case bookkeeping).
It samples op_db as the harness's worker does (crossdev.opinfo.seeding.fast_op_db_sampling: no stack
walk per sample, no lazy seeds queued for runtimes that cannot start; the same seeds), so that the
ratio measures the harness, not op_db's test-only costs that a loop written from scratch would pay.

usage: opinfo_bare_loop.py --kind cuda [--max-samples 16] [--opinfo GLOB]
Prints one JSON line: {"cases": n, "samples": n, "raised": n}. Exit 0."""
import argparse
import json
import os
import sys

import torch
from torch.utils._pytree import tree_flatten


def _tensors(value):
    return [t for t in tree_flatten(value)[0] if isinstance(t, torch.Tensor)]


def run_sample(op, sample, device, backward: bool) -> None:
    expected = op(sample.input, *sample.args, **sample.kwargs)
    dev = sample.transform(lambda t: t.detach().to(device).requires_grad_(t.requires_grad)
                           if isinstance(t, torch.Tensor) else t)
    if op.name == "tensor_split" and dev.args and isinstance(sample.args[0], torch.Tensor):
        dev.args = (sample.args[0],) + tuple(dev.args[1:])  # the harness keeps this argument on the CPU too
    actual = op(dev.input, *dev.args, **dev.kwargs)
    if not backward:
        for a, e in zip(_tensors(actual), _tensors(expected)):
            torch.testing.assert_close(a.cpu(), e, equal_nan=True, check_device=False)
        return
    e_outs = [t for t in _tensors(expected) if t.requires_grad]
    a_outs = [t for t in _tensors(actual) if t.requires_grad]
    e_in = [t for t in _tensors((sample.input, sample.args, sample.kwargs)) if t.requires_grad]
    a_in = [t for t in _tensors((dev.input, dev.args, dev.kwargs)) if t.requires_grad]
    if not e_outs or not e_in:
        return
    grads = [torch.randn_like(t) for t in e_outs]
    e_grads = torch.autograd.grad(e_outs, e_in, grads, allow_unused=True)
    a_grads = torch.autograd.grad(a_outs, a_in, [g.to(a.device) for g, a in zip(grads, a_outs)], allow_unused=True)
    for a, e in zip(a_grads, e_grads):
        if a is not None and e is not None:
            torch.testing.assert_close(a.cpu(), e, equal_nan=True, check_device=False)


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--kind", default="cuda")
    p.add_argument("--max-samples", type=int, default=16)
    p.add_argument("--opinfo", default="*")
    args = p.parse_args(argv)
    import crossdev
    from crossdev.opinfo import seeding, selection
    crossdev.sim.register()
    seeding.fast_op_db_sampling()
    device = crossdev.sim.device_for(args.kind)["device"]
    op_db = selection.load_op_db()
    cases = samples = raised = 0
    for op in selection.select(op_db, args.opinfo, []):
        for backward in (False, True):
            if backward and not op.supports_autograd:
                continue
            supported = op.supported_backward_dtypes("cpu") if backward else op.supported_dtypes("cpu")
            if torch.float32 not in supported:
                continue
            cases += 1
            torch.manual_seed(0)
            for index, sample in enumerate(op.sample_inputs("cpu", torch.float32, requires_grad=backward)):
                if index >= args.max_samples:
                    break
                torch.manual_seed(index)
                samples += 1
                try:
                    run_sample(op, sample, device, backward)
                except Exception:  # noqa: BLE001  a failing sample still ran
                    raised += 1
    sys.stdout.flush()
    print(json.dumps({"cases": cases, "samples": samples, "raised": raised}), flush=True)
    os._exit(0)  # docs/sim-backend.md "At interpreter exit": a backward on sim may abort the exit


if __name__ == "__main__":
    sys.exit(main())
