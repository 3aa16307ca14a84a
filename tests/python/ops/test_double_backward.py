"""Double backward: `crossdev::<op>_backward` is itself differentiable, so gradgradcheck passes.

Every op's first-order gradient is its backend's backward kernel (fused on cpu, derived from the
fallback composition on sim); its second-order gradient is ATen's autograd over the fallback
composition differentiated twice (impl/ops/library/autograd_kernels.cpp). gradgradcheck
compares that analytic second derivative with finite differences of the first-order kernel, in
float64, on cpu and on `sim` (PrivateUse1), for every op: the 7 smooth ones, and
bias_dropout_add_scale in eval mode. In training mode the dropout mask is random and the op has
no double backward: it raises naming the op, instead of PyTorch's not-implemented warning.
"""
import warnings

import pytest
import torch

import crossdev  # noqa: F401
from conftest import register_sim_where_allowed
from op_samples import op_arguments

OPS = crossdev.ops.op_names()
DEVICES = ["cpu", "sim"] + (["cuda"] if torch.cuda.is_available() else [])
SHAPE_SETS = ("odd_tail", "broadcast", "size1")  # odd lengths (vector tails), broadcast inputs, one element


@pytest.fixture(scope="module", autouse=True)
def sim_backend():
    register_sim_where_allowed(crossdev)


def argument_names(op):
    return [a.name for a in getattr(torch.ops.crossdev, op).default._schema.arguments]


def eval_mode_arguments(op, shape_set, device):
    """float64 contiguous arguments, differentiable inputs requiring grad; a training flag set to False."""
    args = op_arguments(op, shape_set, torch.float64, device, requires_grad=True)
    # gradcheck perturbs inputs element by element: expanded (stride 0) ones are materialized
    args = [a.detach().contiguous().requires_grad_(a.requires_grad) if isinstance(a, torch.Tensor) else a for a in args]
    names = argument_names(op)
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


@pytest.mark.parametrize("op,shape_set,device", list(cases()))
def test_gradgradcheck(op, shape_set, device):
    args = eval_mode_arguments(op, shape_set, device)
    fn = getattr(torch.ops.crossdev, op)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the autograd fallback's not-implemented warning is a failure
        assert torch.autograd.gradcheck(fn, args, fast_mode=True)
        assert torch.autograd.gradgradcheck(fn, args, fast_mode=True)


def second_derivatives(fn, args):
    """d/d(inputs, grad_out) of <d fn/d inputs . grad_out, v>, for fixed random grad_out and v."""
    leaves = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
    gen = torch.Generator().manual_seed(0)
    y = fn(args)
    grad_out = torch.randn(y.shape, dtype=y.dtype, generator=gen).to(y.device).requires_grad_(True)
    first = torch.autograd.grad(y, leaves, grad_out, create_graph=True)
    v = [torch.randn(f.shape, dtype=f.dtype, generator=gen).to(f.device) for f in first]
    return torch.autograd.grad(first, leaves + [grad_out], v, allow_unused=True, materialize_grads=True)


@pytest.mark.parametrize("op,shape_set,device", list(cases()))
def test_second_derivatives_match_atens_autograd_over_the_fallback(op, shape_set, device):
    # gradgradcheck's fast mode projects on random unit vectors, which hides a small error on
    # inputs of a thousand elements; this compares every second derivative exactly with ATen's
    # autograd differentiating the fallback composition twice (crossdev.ops.run(op, "fallback")).
    args = eval_mode_arguments(op, shape_set, device)
    names = argument_names(op)
    schema_args = getattr(torch.ops.crossdev, op).default._schema.arguments

    def fallback(a):
        tensors = {n: t for n, t in zip(names, a) if isinstance(t, torch.Tensor)}
        scalars = {arg.name: float(v) for arg, v in zip(schema_args, a)
                   if isinstance(v, (int, float)) and not isinstance(v, bool) and arg.name not in ("seed",)}
        return crossdev.ops.run(op, "fallback", tensors, scalars, training=False)

    # on the cpu: run(op, "fallback") is ATen's autograd over the composition only where the
    # device has a native kernel (elsewhere it is the op itself)
    cpu_args = [a.detach().cpu().requires_grad_(a.requires_grad) if isinstance(a, torch.Tensor) else a for a in args]
    ours = second_derivatives(lambda a: getattr(torch.ops.crossdev, op)(*a), args)
    reference = second_derivatives(fallback, cpu_args)
    for got, want in zip(ours, reference):
        torch.testing.assert_close(got.cpu(), want.cpu())


@pytest.mark.parametrize("device", DEVICES)
def test_second_derivative_matches_atens_over_the_reference(device):
    # An independent reference: ATen's own gelu (tanh) differentiated twice.
    x = torch.randn(3, 67, dtype=torch.float64).to(device).requires_grad_(True)
    (g,) = torch.autograd.grad(torch.ops.crossdev.gelu_tanh(x).sum(), x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    ref_x = x.detach().cpu().requires_grad_(True)
    (ref_g,) = torch.autograd.grad(torch.nn.functional.gelu(ref_x, approximate="tanh").sum(), ref_x, create_graph=True)
    (ref_gg,) = torch.autograd.grad(ref_g.sum(), ref_x)
    torch.testing.assert_close(g.detach().cpu(), ref_g.detach())
    torch.testing.assert_close(gg.cpu(), ref_gg)


@pytest.mark.parametrize("device", DEVICES)
def test_double_backward_in_training_mode_raises_naming_the_op(device):
    args = op_arguments("bias_dropout_add_scale", "no_bias_no_residual", torch.float64, device, requires_grad=True)
    names = argument_names("bias_dropout_add_scale")
    assert args[names.index("training")] and args[names.index("p")] > 0
    x = args[0]
    y = torch.ops.crossdev.bias_dropout_add_scale(*args)
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)  # the first derivative is fine
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeError, match=r"crossdev::bias_dropout_add_scale_backward: double backward .* "
                                               r"not supported in training mode"):
            g.sum().backward()
