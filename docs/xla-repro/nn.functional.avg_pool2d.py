#!/usr/bin/env python3
"""Reproduces crossdev case opinfo.xla/nn.functional.avg_pool2d/xla/float32/forward
(bundle bundle.json; `crossdev repro`, docs/repro.md). Needs only torch and torch_xla.

crossdev's verdict: xfail: expected failure (accepted: (torch_xla 2.9.0 on torch 2.9.0) 4 of 4 samples differ from the CPU; first: sample 0 shapes [(1, 3, 9, 9)]: output[0]: Mismatched elements: 96 / 243 (39.5%), first at [0, 0, 0, 0]: actual 20.0876637 vs expected 8.92785072; max_abs=13..., matrices/xla/expectations/opinfo/xla.yaml:55): 4 of 4 samples differ from the CPU; first: sample 0 shapes [(1, 3, 9, 9)]: output[0]: Mismatched elements: 96 / 243 (39.5%), first at [0, 0, 0, 0]: actual -10.6506243 vs expected -4.73361063; max_abs=11.4350319, max_rel=1.25000009, max_ulp=19767477, ulp_floor=7.69230769 (rtol=1.3e-06, a

The case: nn.functional.avg_pool2d (forward, variant function, float32), op_db sample 0,
made on xla:0 and copied to the CPU; these are its exact values. The call is torch.nn.functional.avg_pool2d
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
    _tensor([-3.8768091201782227, 4.656383514404297, 4.270392417907715, 1.7424488067626953, -4.49971866607666, 4.071351051330566, -8.99645709991455, 1.455488920211792, 2.270195960998535, -6.536612033843994, -3.71018385887146, -7.7052226066589355, 8.88045883178711, -7.481781959533691, -7.630663871765137, -1.7311298847198486, 6.983268737792969, -2.86598539352417, -7.140316963195801, -4.996397495269775, -4.375526428222656, -4.734027862548828, -3.909029960632324, -6.191510200500488, 6.169614791870117, -3.8503475189208984, 0.8567919731140137, -6.568105697631836, -8.602706909179688, 7.360223770141602, -1.2614150047302246, -1.242126703262329, -4.199317932128906, -4.324386119842529, 4.64708137512207, -4.7091779708862305, -1.801558256149292, 6.455538749694824, 4.958885192871094, -2.714449167251587, 4.99872350692749, -6.118940353393555, 6.510189056396484, -8.758525848388672, -1.6063127517700195, 6.038908004760742, 8.4427490234375, -4.070026874542236, 1.1500861644744873, 4.779705047607422, 0.41562652587890625, -6.813756942749023, -7.26970911026001, 6.025782108306885, -6.8378801345825195, -4.861875057220459, -0.9523687362670898, 0.7854151725769043, 2.052647352218628, 0.03909158706665039, -0.7138259410858154, -5.958387851715088, -0.9026534557342529, 2.2851669788360596, -1.5162978172302246, 0.42539191246032715, 6.7995500564575195, 1.171569585800171, 3.185455799102783, -6.8785295486450195, 1.3708298206329346, -8.095478057861328, 3.029106616973877, -5.674239158630371, -4.171421051025391, -7.210857391357422, -3.362286329269409, -7.180035591125488, -7.105429172515869, -2.7482728958129883, -8.823128700256348, 8.548163414001465, -5.816187858581543, -2.3234667778015137, 4.157408714294434, 5.920905590057373, 4.55808162689209, 2.1442973613739014, 1.8047983646392822, -1.9086084365844727, -6.3514299392700195, 2.9272491931915283, 8.914047241210938, 3.377647876739502, -1.9770970344543457, 0.15595006942749023, 4.367702484130859, 4.832291603088379, 3.2596821784973145, 2.8054254055023193, -6.612282752990723, 7.6476731300354, -8.728886604309082, 5.146043300628662, -5.833469867706299, 2.440683603286743, 4.271036148071289, 2.9461662769317627, -8.832930564880371, -2.175363779067993, -8.999287605285645, 6.723903179168701, -7.01479434967041, -6.704374313354492, 5.099025249481201, 1.0674805641174316, -4.797544956207275, -7.585963249206543, -4.676098823547363, 2.9682118892669678, -4.939279556274414, 7.28515625, -5.702174663543701, 7.964632987976074, -7.492244720458984, 8.06810188293457, 8.007807731628418, 0.5393450260162354, 1.0681607723236084, -4.492161750793457, 0.5930063724517822, 8.839752197265625, -5.9765520095825195, -4.613083839416504, 2.607757329940796, 4.323879718780518, -8.420256614685059, 3.2606263160705566, 0.7230312824249268, 2.795941114425659, 4.725425720214844, -5.802424907684326, -6.802987575531006, 7.59753942489624, -4.5328474044799805, 2.0278122425079346, 7.074349880218506, -1.870396614074707, 6.6871137619018555, 5.872964859008789, 6.345059394836426, -3.563587188720703, -4.348094940185547, 7.57164192199707, 4.398074150085449, 2.332794427871704, -2.5291900634765625, -0.6692712306976318, 0.5458016395568848, 6.721066474914551, -6.266654968261719, -0.903052568435669, -4.315526008605957, 2.695017099380493, -2.645827531814575, -2.712352752685547, -6.00452184677124, 6.5314130783081055, 8.98107624053955, 0.826545238494873, 4.2808074951171875, 2.152743101119995, 0.6957693099975586, 7.426953315734863, 3.4589552879333496, 4.38953161239624, -1.128920316696167, 8.043116569519043, 2.499014139175415, -8.563782691955566, -3.5341193675994873, 8.634992599487305, -0.2807350158691406, -8.827716827392578, -2.4554336071014404, 5.172084331512451, 8.985638618469238, 6.127122402191162, -4.187685966491699, -0.5410165786743164, 0.06530427932739258, 1.3749046325683594, -8.330911636352539, 0.984699010848999, -7.090333938598633, -7.395685195922852, 2.7541608810424805, -6.517276763916016, -2.888402223587036, -2.434875011444092, -1.8421175479888916, -8.108940124511719, -7.833404541015625, -3.296494960784912, 1.4128525257110596, -7.449590682983398, 6.84266471862793, -4.475890159606934, 5.141425609588623, -3.098741054534912, -7.342514991760254, 4.451471328735352, -0.8834123611450195, 8.903122901916504, -7.412926197052002, 8.451211929321289, -6.295279502868652, 8.47376823425293, -2.2255446910858154, -6.68532657623291, -3.2818758487701416, -4.36994743347168, -4.181883811950684, -4.703133583068848, -4.886965751647949, -6.004826545715332, 3.004814386367798, 3.8323874473571777, -7.548012733459473, 7.941295623779297, -0.24578475952148438, 4.670485496520996, 6.0849151611328125, 8.76307487487793, 2.9780824184417725, 7.839448928833008, -7.8701934814453125, 5.965457916259766, 8.057249069213867, -8.563966751098633, 2.4671924114227295, -2.8655498027801514, 4.5980916023254395], torch.float32, (1, 3, 9, 9), False),
]


def sample(device):
    """The sample on `device`: (input, args, kwargs), fresh copies (an op may update its inputs in place),
    requires_grad kept."""
    moved = [t.detach().clone().to(device).requires_grad_(t.requires_grad) for t in T]
    return _with(moved, device)


def _with(T, device):
    return (T[0], (3, 1, 1, True, False, 2), {})


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
    fn = torch.nn.functional.avg_pool2d
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
