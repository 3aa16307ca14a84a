#!/usr/bin/env python3
"""Reproduces crossdev case opinfo.xla/norm.nuc/xla/float32/forward
(bundle bundle.json; `crossdev repro`, docs/repro.md). Needs only torch and torch_xla.

crossdev's verdict: xfail: expected failure (accepted: (torch_xla 2.9.0 on torch 2.9.0) 1 of 2 samples differ from the CPU; first: sample 1 shapes [(5, 5, 5)]: output[0]: metadata differs: device () torch.float32 torch.strided, cpu (5,) torch.float32 torch.strided; tolerance rtol=1.3e-06..., matrices/xla/expectations/opinfo/xla.yaml:43): 1 of 2 samples differ from the CPU; first: sample 1 shapes [(5, 5, 5)]: output[0]: metadata differs: device () torch.float32 torch.strided, cpu (5,) torch.float32 torch.strided; tolerance rtol=1.3e-06, atol=1e-05 (crossdev per-dtype table); the same samples fail in reverse order: not an

The case: norm.nuc (forward, variant function, float32), op_db sample 1,
made on xla:0 and copied to the CPU; these are its exact values. The call is torch.norm
. Tolerance: rtol=1.3e-06,
atol=1e-05 (crossdev per-dtype table), torch.testing.assert_close with equal_nan=True.
Recorded with torch 2.9.0+cu128.
The 1 sample(s) the case ran on the device before this one (op_db samples 0) run first, in the same order, their results unused:
a device that reuses a compiled graph for another argument fails only after them; --alone skips them.

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
SEED = 1
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
    _tensor([6.985043048858643, 5.159780502319336, 3.8877525329589844, -0.5141515731811523, 6.492368698120117, 6.753248691558838, -8.30526065826416, 6.8617730140686035, -7.941596031188965, -0.593637228012085, 7.904796123504639, -0.1471545696258545, 7.186466217041016, -0.02146625518798828, -6.711676597595215, -1.3160226345062256, -3.8563320636749268, -8.143840789794922, -5.274484634399414, 7.550753116607666, 2.6788079738616943, 0.256131649017334, -4.868260860443115, -4.272574424743652, 3.6413283348083496, -4.840395927429199, -0.6111230850219727, -6.774446487426758, 0.0792839527130127, -3.541938543319702, 1.451068639755249, -0.34986305236816406, -8.965377807617188, 1.5025198459625244, -7.412666320800781, -5.492856979370117, -3.057141065597534, 1.8657467365264893, -3.760517120361328, 6.734020233154297, 2.014770269393921, -6.601409912109375, 6.269277572631836, -8.440370559692383, 0.8122479915618896, 2.194941759109497, -0.8079392910003662, -6.69151496887207, 1.7667689323425293, -6.5780792236328125, -2.7697370052337646, 0.33936166763305664, -3.778494358062744, -6.869656562805176, -2.203359603881836, -7.200915813446045, 1.2401032447814941, 5.141035079956055, 4.785213470458984, -8.215700149536133, -5.817908763885498, 3.2309160232543945, -8.882186889648438, 4.826611518859863, -6.025690078735352, -8.774005889892578, -1.755366325378418, -4.4942450523376465, -2.1744604110717773, -3.0396509170532227, 4.8628621101379395, 4.231545448303223, 2.671029567718506, 4.095655918121338, -3.050703763961792, -5.975436210632324, 2.614441394805908, -8.35402774810791, 0.20670390129089355, -0.4797399044036865, 0.2875993251800537, 0.3212106227874756, 7.294801712036133, 1.9292078018188477, -5.882444858551025, 6.216150283813477, 5.328122138977051, 5.883152961730957, -1.8162074089050293, -2.822838306427002, 5.410845756530762, 4.026321887969971, 7.800505638122559, -1.7087280750274658, -0.9041855335235596, 2.2453222274780273, 6.6764817237854, 5.772113800048828, -2.017267942428589, 4.082734107971191, -5.931611061096191, 5.744392395019531, -8.75341510772705, -7.491879463195801, 3.6725385189056396, 5.772594451904297, 8.694730758666992, -6.910003662109375, 5.0227131843566895, -7.2262187004089355, -8.293132781982422, 6.782079219818115, 5.714600563049316, -8.075835227966309, -8.003153800964355, 7.459577560424805, 0.4846172332763672, -5.07507848739624, -1.0005240440368652, 3.0511693954467773, -3.2634522914886475, -3.8744723796844482, 3.6389336585998535, 6.050295352935791, 5.963746070861816], torch.float32, (5, 5, 5), False),
    _tensor([8.208108901977539, -4.852869033813477, 6.084484100341797, -4.951634407043457, -3.9570822715759277, -5.169498443603516, -2.704308271408081, -0.21151471138000488, 1.5662341117858887, 8.693917274475098, 6.819059371948242, -3.4319379329681396, 4.7670087814331055, 0.7601401805877686, 1.5788640975952148, -5.503676414489746, -0.046361446380615234, -0.5349440574645996, -4.787112236022949, -2.12900447845459, 2.7944862842559814, -8.445623397827148, 4.441010475158691, -7.3274688720703125, -0.8997931480407715], torch.float32, (5, 5), False),
]


def sample(device):
    """The sample on `device`: (input, args, kwargs), fresh copies (an op may update its inputs in place),
    requires_grad kept."""
    moved = [t.detach().clone().to(device).requires_grad_(t.requires_grad) for t in T]
    return _with(moved, device)


def _with(T, device):
    return (T[0], ('nuc', [1, 2]), {})


# (op_db sample, seed, the sample from T) of the samples the case ran on the device before this one, in order
BEFORE = [
    (0, 0, lambda T, device: (T[1], ('nuc',), {})),
]


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
