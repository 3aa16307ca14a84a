"""The standalone script of a failing ops case (`crossdev repro`, docs/repro.md, "An ops case").

An ops case checks one of crossdev's implementations of its own operators (torch.ops.crossdev.<op>: the fused
kernel or the fallback composition) on one device, dtype and shape set, against the float64 golden (the fallback
on the CPU in float64, rounded to the dtype), the fallback on the same device, and the same implementation on the
CPU (conformance/parity/op_parity.cpp). The engine records the case's exact inputs, with their layout, and its
grad_out (conformance/parity/ops_repro_sample.h); this module writes the script that makes the same calls and
comparisons with torch only. The operators live in crossdev's op library (libcrossdev_ops), which the script
loads with torch.ops.load_library: the library file, not the crossdev package.
"""
from __future__ import annotations

import os
from pathlib import Path

SCHEMA = "crossdev.ops_repro_sample"


def op_library_paths() -> list[str]:
    """The op library of this crossdev (the one `crossdev run` loaded), by path."""
    import crossdev
    lib = Path(crossdev.__file__).resolve().parent / "lib"
    return [str(p) for p in sorted(lib.glob("libcrossdev_ops.*"))]


def _values(doc, literal) -> str:
    values, _ = literal(doc)
    return values


def script_text(case: dict, record: dict, bundle_path: str, device: str, literal) -> str:
    """`literal(doc)` spells a tensor doc's values as a Python list (crossdev.repro._element_literals)."""
    from crossdev.repro import SCRIPT_HELPERS
    tensors = "\n".join(
        f"    {name!r}: ({_values(doc, literal)}, torch.{doc['dtype']}, {tuple(doc['shape'])!r}, "
        f"{doc.get('permute')!r}, {doc.get('expand')!r}),"
        for name, doc in record["tensors"].items())
    grad_out = record.get("grad_out")
    grad_out_src = ("None" if not grad_out else
                    f"({_values(grad_out, literal)}, torch.{grad_out['dtype']}, {tuple(grad_out['shape'])!r}, "
                    f"{grad_out.get('permute')!r}, {grad_out.get('expand')!r})")
    libraries = op_library_paths()
    raised = record["kind"] == "raised"
    op = record["op"]
    comparisons = record["comparisons"]
    header = f'''#!/usr/bin/env python3
"""Reproduces crossdev case {case["id"]}
(bundle {os.path.basename(bundle_path)}; `crossdev repro`, docs/repro.md). Needs torch and crossdev's op library
(libcrossdev_ops, loaded with torch.ops.load_library; --library PATH names another copy): not the crossdev package.

crossdev's verdict: {case["status"]}: {case.get("message", "")[:600]}

The case: torch.ops.crossdev.{op}, its {record["impl"]} implementation, {record["dtype"]}, shape set
{(case.get("details") or {}).get("shape_set", "?")}, on {record["device_kind"]}: the exact inputs the case ran on (values and
strides). {"The device raised: the script is the call alone." if raised else
 "Compared as the case compared (" + ", ".join(comparisons) + "): the golden is the fallback on the CPU in float64, rounded to " + record["dtype"] + ";" + chr(10) + "fused_vs_fallback the fallback on the same device; vs_cpu the same implementation on the CPU."}
Checks: {", ".join(record["checks"])}. Tolerance rtol={record["tolerance"]["rtol"]!r}, atol={record["tolerance"]["atol"]!r}; gradients
rtol={record["grad_tolerance"]["rtol"]!r}, atol={record["grad_tolerance"]["atol"]!r}; torch.testing.assert_close with equal_nan=True.

    python3 repro.py [--device DEV] [--library PATH]   # default {device}; exit 1 while the case's failure
                                                       # reproduces ({"raises" if raised else "differs"}), 0 once fixed
"""
'''
    body = f'''import argparse
import sys

import torch

parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
parser.add_argument("--device", default={device!r}, help="the device to run on (default: %(default)s)")
parser.add_argument("--library", action="append", default=None,
                    help="crossdev's op library to load (repeatable; default: the one the bundle's crossdev loaded)")
ARGS = parser.parse_args()
DEVICE_ARG = ARGS.device
if DEVICE_ARG.split(":")[0] == "xla":
    import torch_xla  # noqa: F401  (registers the xla device)
LIBRARIES = ARGS.library or {libraries!r}
if not hasattr(torch.ops.crossdev, {op!r}):
    for path in LIBRARIES:
        torch.ops.load_library(path)

KIND, IMPL, DTYPE = {record["kind"]!r}, {record["impl"]!r}, torch.{record["dtype"]}
CHECKS, COMPARISONS = {record["checks"]!r}, {comparisons!r}
RTOL, ATOL = {record["tolerance"]["rtol"]!r}, {record["tolerance"]["atol"]!r}
GRAD_RTOL, GRAD_ATOL = {record["grad_tolerance"]["rtol"]!r}, {record["grad_tolerance"]["atol"]!r}
GRAD_INPUTS = {record["grad_inputs"]!r}
SCALARS, TRAINING = {record["scalars"]!r}, {record["training"]!r}
OP = torch.ops.crossdev.{op}.default
nan, inf = float("nan"), float("inf")  # the literals below spell non-finite values so

# name: (values, dtype, contiguous shape, permute back, expand to): the case's inputs with their strides
TENSORS = {{
{tensors}
}}
GRAD_OUT = {grad_out_src}


def _tensor(spec, device, dtype):
    values, recorded, shape, permute, expand = spec
    t = torch.tensor(values, dtype=recorded).reshape(shape)
    if t.is_floating_point():
        t = t.to(dtype)
    t = t.to(device)
    if permute:
        t = t.permute(*permute)
    if expand:
        t = t.expand(*expand)
    return t


def inputs(device, dtype):
    return {{name: _tensor(spec, device, dtype) for name, spec in TENSORS.items()}}


def arguments(tensors):
    """The op's arguments in its schema's order, as crossdev's call marshalling fills them."""
    args = []
    for a in OP._schema.arguments:
        if a.name in tensors:
            args.append(tensors[a.name])
        elif a.name == "training":
            args.append(TRAINING)
        elif a.name in SCALARS:
            args.append(int(SCALARS[a.name]) if str(a.type) == "int" else SCALARS[a.name])
        else:
            args.append(a.default_value if a.default_value is not None else None)
    return args


def _backend_key(device):
    kind = torch.device(device).type
    return {{"cpu": "CPU", "cuda": "CUDA", "xpu": "XPU", "mps": "MPS", "xla": "XLA"}}.get(kind, "PrivateUse1")


def fused(*args):
    return OP(*args)


def fallback(*args):
    """The fallback composition (the op's CompositeExplicitAutograd kernel), as the case ran it."""
    device = next(a for a in args if isinstance(a, torch.Tensor)).device
    if torch._C._dispatch_has_kernel_for_dispatch_key(OP.name(), _backend_key(device)):
        return OP._op_dk(torch._C.DispatchKey.CompositeExplicitAutograd, *args)
    return OP(*args)


IMPLS = {{"fused": fused, "fallback": fallback}}


def evaluate(run, device, dtype):
    """{{"out": ..., "grad.<input>": ...}} on the CPU: the output, and the gradients of the differentiable inputs
    for the recorded grad_out when the case checked backward."""
    backward = "backward" in CHECKS
    tensors = inputs(device, dtype)
    leaves = {{}}
    if backward:
        for name in GRAD_INPUTS:
            if name in tensors and tensors[name].is_floating_point():
                tensors[name] = leaves[name] = tensors[name].detach().requires_grad_(True)
    with torch.set_grad_enabled(backward):
        out = run(*arguments(tensors))
    results = {{"out": out.detach().cpu()}}
    if leaves:
        out.backward(_tensor(GRAD_OUT, device, DTYPE).to(out.dtype))
        for name, leaf in leaves.items():
            grad = leaf.grad if leaf.grad is not None else torch.zeros_like(leaf.detach())
            results["grad." + name] = grad.detach().cpu()
    return results


{SCRIPT_HELPERS}


def compare(label, actual, expected, device):
    failed = 0
    for name, a in actual.items():
        if name not in expected or ("forward" if name == "out" else "backward") not in CHECKS:
            continue
        e = expected[name].to(a.dtype)
        rtol, atol = (RTOL, ATOL) if name == "out" else (GRAD_RTOL, GRAD_ATOL)
        try:
            torch.testing.assert_close(a, e, rtol=rtol, atol=atol, equal_nan=True)
        except AssertionError as mismatch:
            failed += 1
            print(f"{{label}} {{name}} differs on {{device}} (rtol={{rtol}}, atol={{atol}}):\\n{{mismatch}}")
            if a.shape == e.shape and a.numel():
                index, av, ev = worst(a, e, rtol, atol)
                print(f"worst element {{list(index)}}: {{device}} {{av!r}}, {{label}} {{ev!r}}")
            print(f"{{device}}:\\n{{a}}\\n{{label}}:\\n{{e}}")
    return failed


def main():
    device = DEVICE_ARG
    run = IMPLS[IMPL]
    if KIND == "raised":  # the device raised on these inputs: the call alone
        return call_alone(lambda: evaluate(run, device, DTYPE), device)
    actual = evaluate(run, device, DTYPE)
    references = {{
        "golden": lambda: evaluate(fallback, "cpu", torch.float64),
        "fused_vs_fallback": lambda: evaluate(fallback, device, DTYPE),
        "vs_cpu": lambda: evaluate(run, "cpu", DTYPE),
    }}
    failed = compared = 0
    for label in COMPARISONS:
        if label == "vs_cpu" and torch.device(device).type == "cpu":
            continue  # the CPU is that reference
        if label == "fused_vs_fallback" and IMPL == "fallback":
            continue
        compared += 1
        failed += compare(label, actual, references[label](), device)
    if failed:
        print(f"FAIL: {{failed}} result(s) differ ({{compared}} reference(s) compared)")
        return 1
    print(f"OK: {{device}} agrees with {{compared}} reference(s) on {{', '.join(sorted(actual))}}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''
    return header + body
