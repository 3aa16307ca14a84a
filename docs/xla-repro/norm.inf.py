#!/usr/bin/env python3
"""Reproduces crossdev case opinfo.xla/norm.inf/xla/float32/forward
(bundle bundle.json; `crossdev repro`, docs/repro.md). Needs only torch and torch_xla.

crossdev's verdict: xfail: expected failure (accepted: (torch_xla 2.9.0 on torch 2.9.0) 4 of 4 samples differ from the CPU; first: sample 0 shapes [(5, 5)]: output[0]: Mismatched elements: 1 / 1 (100.0%), first at []: actual 1 vs expected 0.304194689; max_abs=0.695805311, max_rel=2.28736..., matrices/xla/expectations/opinfo/xla.yaml:44): 4 of 4 samples differ from the CPU; first: sample 0 shapes [(5, 5)]: output[0]: Mismatched elements: 1 / 1 (100.0%), first at []: actual 1 vs expected 0.381899357; max_abs=0.618100643, max_rel=1.61849092, max_ulp=1296251, ulp_floor=7.69230769 (rtol=1.3e-06, atol=1e-05); float64: device 

The case: norm.inf (forward, variant function, float32), op_db sample 0,
made on xla:0 and copied to the CPU; these are its exact values. The call is torch.norm
. Tolerance: rtol=1.3e-06,
atol=1e-05 (crossdev per-dtype table), torch.testing.assert_close with equal_nan=True.
Recorded with torch 2.9.0+cu128.

    python3 repro.py [--device DEV] [--alone]   # default xla; exit 1 while the device differs from the CPU
                                           # (differs), 0 once fixed
"""
import argparse
import os
import sys

import torch

parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
parser.add_argument("--device", default='xla', help="the device to run on (default: %(default)s); cpu: the golden itself")
parser.add_argument("--alone", action="store_true", help="the failing sample alone, without the samples the case ran before it")
ARGS = parser.parse_args()
DEVICE_ARG = ARGS.device
if DEVICE_ARG.split(":")[0] == "xla":
    import torch_xla  # noqa: F401  (registers the xla device)

CHECK, VARIANT, KIND = 'forward', 'function', 'mismatch'
RTOL, ATOL = 1.3e-06, 1e-05
SEED = 0
N_SAMPLE_TENSORS = 1  # forward: the sample's tensors are compared after the call too
# the numerics switches the case ran with (crossdev's parity mode turns TF32 off on cuda)
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = True


nan, inf = float("nan"), float("inf")  # the literals below spell non-finite values so


def _tensor(values, dtype, shape, requires_grad):
    return torch.tensor(values, dtype=dtype).reshape(shape).requires_grad_(requires_grad)


def _complex(values, real_dtype, shape, requires_grad):
    return torch.view_as_complex(torch.tensor(values, dtype=real_dtype).reshape(*shape, 2)).requires_grad_(requires_grad)


T = [
    _tensor([-5.5799689292907715, 7.358724117279053, -5.194746017456055, -2.1857149600982666, -2.794321060180664, 3.0342178344726562, -8.751751899719238, -5.829530239105225, -6.3188982009887695, 1.0570886135101318, 7.034707069396973, 6.236110210418701, -4.349530220031738, 2.1986238956451416, -4.848142147064209, 7.470681667327881, 4.691994667053223, -5.984383583068848, 7.730598449707031, 0.381899356842041, 4.3912458419799805, 0.7271876335144043, -6.993192672729492, 3.187706708908081, 3.2619760036468506], torch.float32, (5, 5), False),
]


def sample(device):
    """The sample on `device`: (input, args, kwargs), fresh copies (an op may update its inputs in place),
    requires_grad kept."""
    moved = [t.detach().clone().to(device).requires_grad_(t.requires_grad) for t in T]
    return _with(moved, device)


def _with(T, device):
    return (T[0], (float('-inf'),), {})


# (op_db sample, seed, the sample from T) of the samples the case ran on the device before this one, in order
BEFORE = []


def flatten(x):
    if isinstance(x, (tuple, list)):
        return [y for item in x for y in flatten(item)]
    if isinstance(x, dict):
        return [y for item in x.values() for y in flatten(item)]
    return [x]


def empty_like_on(template, device):
    if isinstance(template, torch.Tensor):
        return torch.empty_like(template.detach(), device=device)
    return tuple(empty_like_on(t, device) for t in template)


def call(inp, args, kwargs, device):
    """The case's call (function variant)."""
    fn = torch.norm
    if VARIANT == "inplace":
        return fn(inp.clone(), *args, **kwargs)
    if VARIANT == "out":
        template = fn(*[_cpu(x) for x in (inp,)], *_cpu(args), **_cpu(kwargs))
        out = empty_like_on(template, device)
        fn(inp, *args, **kwargs, out=out)
        return out
    return fn(inp, *args, **kwargs)


def _cpu(x):
    if isinstance(x, torch.Tensor):
        return x.detach().to("cpu")
    if isinstance(x, tuple):
        return tuple(_cpu(y) for y in x)
    if isinstance(x, list):
        return [_cpu(y) for y in x]
    if isinstance(x, dict):
        return {k: _cpu(y) for k, y in x.items()}
    return x


def process(result):
    """op_db's output_process_fn_grad of the sample, applied to both results (none: the identity)."""
    return result


def run(device):
    """The results crossdev compared: the outputs (forward) or the inputs' gradients (backward), after the
    samples the case ran before this one (BEFORE; not with --alone), on the same device, results unused."""
    for _, seed, make in ([] if ARGS.alone else BEFORE):
        torch.manual_seed(seed)
        moved = [t.detach().clone().to(device).requires_grad_(t.requires_grad) for t in T]
        try:
            results(*make(moved, device), device)
        except Exception as e:  # the case went on past a sample that raised: so does the script
            print(f"{device}: an earlier sample raised {type(e).__name__}: {str(e)[:200]}")
    torch.manual_seed(SEED)
    return results(*sample(device), device)


def results(inp, args, kwargs, device):
    """One sample's results, on the CPU (on a lazy device, copying them runs the graph)."""
    result = process(call(inp, args, kwargs, device))
    if CHECK == "forward":  # the outputs, then the sample's tensors after the call (an op updates some in place)
        values = flatten(result) + [t for t in flatten((inp, args, kwargs)) if isinstance(t, torch.Tensor)]
        return [t.detach().to("cpu") if isinstance(t, torch.Tensor) else t for t in values]
    outs = [t for t in flatten(result) if isinstance(t, torch.Tensor) and t.requires_grad]
    inputs = [t for t in flatten((inp, args, kwargs)) if isinstance(t, torch.Tensor) and t.requires_grad]
    grad_outputs = []
    grads = torch.autograd.grad(outs, inputs, [g.to(o.device) for g, o in zip(grad_outputs, outs)], allow_unused=True)
    return [g.detach().to("cpu") if g is not None else None for g in grads]


def worst(actual, expected):
    """The element farthest outside the tolerance: (index, actual, expected)."""
    a, e = actual.to(torch.complex128 if actual.is_complex() else torch.float64), expected.to(
        torch.complex128 if expected.is_complex() else torch.float64)
    excess = (a - e).abs() - (ATOL + RTOL * e.abs())
    excess = torch.where(torch.isnan(excess) & ~(torch.isnan(a) & torch.isnan(e)), torch.full_like(excess, float("inf")), excess)
    excess = torch.nan_to_num(excess, nan=float("-inf"))
    flat = int(excess.reshape(-1).argmax()) if excess.numel() else 0
    index = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), actual.shape)) if actual.dim() else ()
    return index, actual[index].item() if actual.numel() else None, expected[index].item() if expected.numel() else None


def main():
    device = DEVICE_ARG
    if KIND == "raised":  # the device raised on this sample: the call alone
        try:
            result = run(device)
            print(f"{device}: the call returned without raising ({len(result)} result(s)): fixed")
            return 0
        except Exception as e:  # the device's error, as crossdev recorded it
            print(f"{device}: the call raised {type(e).__name__}: {e}")
            return 1
    expected = run("cpu")
    actual = run(device)
    if len(actual) != len(expected):
        print(f"{device} returned {len(actual)} values, the CPU {len(expected)}")
        return 1
    failed = 0
    for i, (a, e) in enumerate(zip(actual, expected)):
        outputs = len(actual) - N_SAMPLE_TENSORS if CHECK == "forward" else len(actual)
        label = f"input {i - outputs} after the call" if i >= outputs else             ("output" if CHECK == "forward" else "grad") + f"[{i}]"
        if isinstance(a, torch.Tensor) and isinstance(e, torch.Tensor):
            try:
                torch.testing.assert_close(a, e, rtol=RTOL, atol=ATOL, equal_nan=True)
            except AssertionError as mismatch:
                failed += 1
                print(f"{label} differs on {device} (rtol={RTOL}, atol={ATOL}):\n{mismatch}")
                if a.shape == e.shape and a.numel():
                    index, av, ev = worst(a, e)
                    print(f"worst element {list(index)}: {device} {av!r}, cpu {ev!r}")
                print(f"{device}:\n{a}\ncpu:\n{e}")
        elif a != e and not (a != a and e != e):
            failed += 1
            print(f"{label}: {a!r} on {device}, {e!r} on the CPU")
    if failed:
        print(f"FAIL: {failed} of {len(expected)} result(s) differ from the CPU")
        return 1
    print(f"OK: {device} agrees with the CPU on all {len(expected)} result(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
