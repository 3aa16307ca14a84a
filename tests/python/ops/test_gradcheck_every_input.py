"""gradcheck and gradgradcheck of every crossdev op with EVERY tensor input requiring grad.

test_double_backward.py checks the inputs an op declares differentiable; this file checks the
contract behind that declaration, as ATen keeps it: an op's backward gives a gradient for each
tensor input that requires grad, or the call raises naming the input ("the derivative for 'cos'
is not implemented"). It never returns None silently (issue 38: rotary gave no gradient for cos
and sin, so a model learning its rotary tables trained wrong through the fused op).

The ops are the op table's (crossdev.ops.op_names()), and what each input is comes from the table
too: crossdev.ops.grad_inputs(op) are the declared differentiable ones. Every floating tensor
input requires grad, declared or not:
- a declared one must pass gradcheck and gradgradcheck (float64, cpu and sim, cuda where present);
- an undeclared floating one must make the call raise NotImplementedError naming it;
- a non-floating one (scaled_masked_softmax's bool mask) must be undeclared: it cannot require
  grad (torch refuses it), which is the contract's statement.
Dropout runs with training=False (deterministic), as in test_double_backward.py.
"""
import re
import warnings

import pytest
import torch

import crossdev  # noqa: F401
from conftest import register_sim_where_allowed
from op_samples import op_arguments

OPS = crossdev.ops.op_names()
DEVICES = ["cpu", "sim"] + (["cuda"] if torch.cuda.is_available() else [])
# small: one element, broadcast inputs (a gradient reduced to the input's shape), odd lengths
SHAPE_SETS = ("size1", "broadcast", "odd_tail")


@pytest.fixture(scope="module", autouse=True)
def sim_backend():
    register_sim_where_allowed(crossdev)


def schema_arguments(op):
    return getattr(torch.ops.crossdev, op).default._schema.arguments


def tensor_argument_names(op):
    return [a.name for a in schema_arguments(op) if "Tensor" in str(a.type)]


def every_input_requiring_grad(op, shape_set, device):
    """float64 contiguous arguments, every floating tensor requiring grad; training=False."""
    args = op_arguments(op, shape_set, torch.float64, device)
    # gradcheck perturbs inputs element by element: expanded (stride 0) ones are materialized
    args = [a.detach().contiguous().requires_grad_(a.is_floating_point()) if isinstance(a, torch.Tensor) else a
            for a in args]
    names = [a.name for a in schema_arguments(op)]
    if "training" in names:
        args[names.index("training")] = False
    return args


def cases():
    for op in OPS:
        for shape_set in SHAPE_SETS:
            if shape_set not in crossdev.ops.shape_sets(op):
                continue
            for device in DEVICES:
                yield pytest.param(op, shape_set, device, id=f"{op}/{device}/{shape_set}")


def test_every_op_has_a_small_shape_set():
    # the cases below would silently skip an op with none of SHAPE_SETS
    assert OPS, "the op table is empty"
    missing = [op for op in OPS if not set(SHAPE_SETS) & set(crossdev.ops.shape_sets(op))]
    assert not missing, f"ops with none of {SHAPE_SETS}: {missing}"


@pytest.mark.parametrize("op", OPS)
def test_every_tensor_input_is_declared_or_cannot_require_grad(op):
    """A declared input is a floating tensor of the schema; a floating one left undeclared raises
    naming itself (test_gradcheck below); a non-floating one cannot require grad at all."""
    declared = set(crossdev.ops.grad_inputs(op))
    names = tensor_argument_names(op)
    assert declared <= set(names), f"{op}: declared {sorted(declared)}, schema tensors {names}"
    made = {}  # every tensor some shape set gives (an optional one may be absent from some)
    for shape_set in crossdev.ops.shape_sets(op):
        if shape_set != "large":
            made.update(crossdev.ops.make_inputs(op, shape_set, torch.float64, "cpu", 0)["tensors"])
    for name, t in made.items():
        assert name in names, f"{op}: shape sets make '{name}', not an argument of {names}"
        if t.is_floating_point():
            continue
        assert name not in declared, f"{op}: '{name}' ({t.dtype}) is declared differentiable but is not floating"
        with pytest.raises(RuntimeError, match="floating point"):
            t.detach().requires_grad_(True)


@pytest.mark.parametrize("op,shape_set,device", list(cases()))
def test_gradcheck_and_gradgradcheck_with_every_input_requiring_grad(op, shape_set, device):
    args = every_input_requiring_grad(op, shape_set, device)
    fn = getattr(torch.ops.crossdev, op)
    names = [a.name for a in schema_arguments(op)]
    declared = set(crossdev.ops.grad_inputs(op))
    undeclared = [n for n, a in zip(names, args)
                  if isinstance(a, torch.Tensor) and a.requires_grad and n not in declared]
    if undeclared:
        with pytest.raises(NotImplementedError,
                           match=rf"crossdev::{op}: the derivative for '{re.escape(undeclared[0])}' is not implemented"):
            fn(*args)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the autograd fallback's not-implemented warning is a failure
        # every input requires grad: each must be connected (a None gradient fails gradcheck's
        # Jacobian comparison, check_undefined_grad checks undefined grad_outputs)
        assert torch.autograd.gradcheck(fn, args, fast_mode=True)
        assert torch.autograd.gradgradcheck(fn, args, fast_mode=True)


def test_rotary_table_gradients_match_the_aten_formula():
    """The issue's case: rotary's cos/sin gradients equal ATen's autograd over
    x*cos + rotate_half(x)*sin, reduced to the tables' [T or 1, Dh] shape; float32, with a fused
    kernel on cpu (the fused backward) and the composite on sim."""
    gen = torch.Generator().manual_seed(0)
    for device in ("cpu", "sim"):
        for rows in (8, 1):  # per position, and one row broadcast over T
            x = torch.randn(2, 8, 4, 32, generator=gen)
            cos, sin = torch.randn(rows, 32, generator=gen), torch.randn(rows, 32, generator=gen)
            go = torch.randn(2, 8, 4, 32, generator=gen)
            leaves = [t.to(device).requires_grad_(True) for t in (x, cos, sin)]
            got = torch.autograd.grad(torch.ops.crossdev.rotary(*leaves), leaves, go.to(device), allow_unused=True)
            ref_leaves = [t.clone().requires_grad_(True) for t in (x, cos, sin)]
            rx, rc, rs = ref_leaves
            rotated = torch.cat((-rx[..., 16:], rx[..., :16]), dim=-1)
            want = torch.autograd.grad(rx * rc[None, :, None, :] + rotated * rs[None, :, None, :], ref_leaves, go)
            for name, g, w in zip(("x", "cos", "sin"), got, want):
                assert g is not None, f"rotary on {device}: no gradient for {name}"
                assert g.shape == w.shape, f"rotary on {device}: {name}'s gradient is {tuple(g.shape)}"
                torch.testing.assert_close(g.cpu(), w, msg=lambda m: f"rotary on {device}, d/d{name}: {m}")
