"""Seed 000's own Python functions against crossdev's ops, through the `crossdev` module.

`device_compatible_modulate` and `device_compatible_bias_dropout_scale` (seed000_reference.py)
run with plain PyTorch: in float64 they are the golden reference for crossdev's fused,
fallback and TorchScript implementations (outputs and gradients, assert_close's default
tolerances, every dtype and shape set); in the dtype itself they are what the seed's users
actually ran, and crossdev must be at least as accurate. With dropout active the masks differ
by design (crossdev's mask is portable, F.dropout's comes from the device RNG), so both outputs
are checked for the same structure and keep rate instead (the seed's F.dropout in float64).
"""
import math

import pytest
import torch

from seed000_reference import device_compatible_bias_dropout_scale, device_compatible_modulate

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64]
IMPLS = ["fused", "fallback", "torchscript"]
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
dtype_id = lambda d: str(d).replace("torch.", "")  # noqa: E731


@pytest.fixture(scope="module")
def ops(crossdev_module):
    return crossdev_module.ops


@pytest.fixture(scope="module")
def parity(crossdev_module):
    return crossdev_module.parity


def leaves(tensors, names):
    """Detached copies of `names` that require grad (a fresh graph per implementation)."""
    return {n: (t.detach().requires_grad_(n in names) if t is not None else None) for n, t in tensors.items()}


def grad_output(shape, dtype):
    """Random grad_output, rounded to the dtype under test and returned in float64: the golden
    and the implementation back-propagate the same values (input rounding is not op error)."""
    generator = torch.Generator().manual_seed(0)
    return (torch.rand(shape, generator=generator, dtype=torch.float64) * 2 - 1).to(dtype).double()


def grads_of(out, inputs, names, grad_out):
    out.backward(grad_out.to(out.device))
    return {n: inputs[n].grad for n in names if inputs.get(n) is not None}


def check_against_golden(parity, actual, golden, what):
    """assert_close with the default tolerances of the dtype, and the same verdict from crossdev."""
    expected = golden.to(actual.dtype)
    torch.testing.assert_close(actual, expected, msg=lambda m: f"{what}: {m}")
    verdict = parity.compare(actual, expected)
    assert verdict["passed"], f"{what}: {verdict['summary']}"
    return verdict


# ---- modulate ------------------------------------------------------------------------------

MODULATE_SETS = ["basic", "empty", "size1", "odd_tail", "strided", "broadcast"]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape_set", MODULATE_SETS)
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_modulate_matches_seed(ops, parity, device, shape_set, dtype):
    inputs = ops.make_inputs("modulate", shape_set, dtype, device)["tensors"]
    names = ["x", "shift", "scale"]
    golden_in = leaves({n: t.double() for n, t in inputs.items()}, names)
    golden = device_compatible_modulate(golden_in["x"], golden_in["shift"], golden_in["scale"])
    grad_out = grad_output(golden.shape, dtype)
    golden_grads = grads_of(golden, golden_in, names, grad_out)

    seed_in_dtype = device_compatible_modulate(inputs["x"], inputs["shift"], inputs["scale"])
    for impl in IMPLS:
        run_in = leaves(inputs, names)
        out = ops.run("modulate", impl, run_in)
        verdict = check_against_golden(parity, out, golden.detach(), f"modulate/{impl} out")
        # At least as accurate as the seed's own function evaluated in the dtype, by max abs error
        # against the float64 golden. Not by ULP: an FMA kernel (the AVX2 build) is closer to the
        # golden in abs terms yet can be more ULPs off on results near zero, where ULPs are tiny.
        # Not for float64: there the golden *is* the seed's float64 arithmetic.
        if dtype != torch.float64:
            seed_abs = parity.compare(seed_in_dtype, golden.detach().to(dtype), rtol=0.0, atol=0.0)["max_abs"]
            assert verdict["max_abs"] <= seed_abs * (1 + 1e-6), (impl, verdict["max_abs"], seed_abs)
        grads = grads_of(out, run_in, names, grad_out.to(out.dtype))
        for name in names:
            check_against_golden(parity, grads[name], golden_grads[name], f"modulate/{impl} grad.{name}")


# ---- bias_dropout_add_scale without dropout ------------------------------------------------

EVAL_SETS = ["basic", "odd_tail", "strided", "broadcast", "inference", "no_bias_no_residual"]


def seed_arguments(call):
    t, s = call["tensors"], call["scalars"]
    scale = t.get("scale") if t.get("scale") is not None else s.get("scale_value", 1.0)
    return t["x"], t.get("bias"), scale, t.get("residual")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape_set", EVAL_SETS)
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_bias_dropout_scale_inference_matches_seed(ops, parity, device, shape_set, dtype):
    call = ops.make_inputs("bias_dropout_add_scale", shape_set, dtype, device)
    names = [n for n in ("x", "bias", "scale", "residual") if n in call["tensors"]]
    golden_in = leaves({n: t.double() for n, t in call["tensors"].items()}, names)
    x, bias, scale, residual = seed_arguments({"tensors": golden_in, "scalars": call["scalars"]})
    golden = device_compatible_bias_dropout_scale(x, bias, scale, residual, call["scalars"]["p"], training=False)
    grad_out = grad_output(golden.shape, dtype)
    golden_grads = grads_of(golden, golden_in, names, grad_out)
    for impl in IMPLS:
        run_in = leaves(call["tensors"], names)
        out = ops.run("bias_dropout_add_scale", impl, run_in, call["scalars"], training=False)
        check_against_golden(parity, out, golden.detach(), f"bias_dropout_add_scale/{impl} out")
        grads = grads_of(out, run_in, names, grad_out.to(out.dtype))
        for name in names:
            check_against_golden(parity, grads[name], golden_grads[name], f"bias_dropout_add_scale/{impl} grad.{name}")


# ---- bias_dropout_add_scale with dropout ---------------------------------------------------

def classify(out, kept_value, dropped_value, tolerance):
    """(kept, dropped, unexplained) counts; elements close to both count as neither."""
    rtol, atol = tolerance
    is_kept = torch.isclose(out, kept_value.to(out.dtype), rtol=rtol, atol=atol)
    is_dropped = torch.isclose(out, dropped_value.to(out.dtype), rtol=rtol, atol=atol)
    kept = int((is_kept & ~is_dropped).sum())
    dropped = int((is_dropped & ~is_kept).sum())
    return kept, dropped, int((~is_kept & ~is_dropped).sum())


@pytest.mark.parametrize("p", [0.1, 0.5])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_bias_dropout_scale_training_has_the_seeds_structure(ops, parity, dtype, p):
    call = ops.make_inputs("bias_dropout_add_scale", "large", dtype, "cpu")
    x, bias, scale, residual = seed_arguments({"tensors": {n: t.double() for n, t in call["tensors"].items()},
                                               "scalars": call["scalars"]})
    kept_value = device_compatible_bias_dropout_scale(x / (1 - p), bias / (1 - p), scale, residual, p, training=False)
    dropped_value = residual.expand_as(kept_value)
    tolerance = parity.default_tolerance(dtype)

    scalars = dict(call["scalars"], p=p)
    torch.manual_seed(1)
    ours = ops.run("bias_dropout_add_scale", "fused", call["tensors"], scalars, training=True, seed=7)
    torch.manual_seed(2)  # crossdev's mask must not depend on the device RNG
    assert torch.equal(ours, ops.run("bias_dropout_add_scale", "fused", call["tensors"], scalars, training=True, seed=7))
    assert not torch.equal(ours, ops.run("bias_dropout_add_scale", "fused", call["tensors"], scalars, training=True, seed=8))
    # The seed's function with F.dropout, in float64 so that only its mask, not its per-op
    # rounding in a low-precision dtype, is being judged.
    seeds = device_compatible_bias_dropout_scale(x, bias, scale, residual, p, training=True).to(dtype)

    rates = {}
    for name, out in (("crossdev", ours), ("seed", seeds)):
        kept, dropped, unexplained = classify(out, kept_value, dropped_value, tolerance)
        assert unexplained == 0, f"{name}: {unexplained} elements are neither kept nor dropped values"
        n = kept + dropped
        assert n > 0.99 * out.numel()
        sigma = math.sqrt(n * p * (1 - p))
        assert abs(kept - n * (1 - p)) <= 5 * sigma, (name, kept, n, p)
        rates[name] = (kept, n)
    # The two keep rates agree within 5 sigma of their difference.
    (k1, n1), (k2, n2) = rates["crossdev"], rates["seed"]
    diff_sigma = math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2))
    assert abs(k1 / n1 - k2 / n2) <= 5 * diff_sigma, rates
