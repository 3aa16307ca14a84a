"""The `.out` overloads and the errors of torch.ops.crossdev: every op has `<op>.out`, which
writes into a given tensor and refuses one of the wrong size (unless empty, which it resizes),
the wrong dtype, or one that overlaps an input. Bad calls raise RuntimeError naming the op,
the argument and what was expected; they never crash and never return a wrong result."""
import pytest
import torch

import crossdev  # noqa: F401
from op_samples import op_arguments

OPS = crossdev.ops.op_names()


def inputs(op, device="cpu", dtype=torch.float32, shape_set="odd_tail"):
    return op_arguments(op, shape_set, dtype, device)


@pytest.mark.parametrize("op", OPS)
def test_out_writes_the_same_values_into_the_given_tensor(op):
    args = inputs(op)
    torch.manual_seed(0)  # a random op (dropout) draws from the default generator: the same stream twice
    want = getattr(torch.ops.crossdev, op)(*args)
    out = torch.full_like(want, float("nan"))
    torch.manual_seed(0)
    got = getattr(torch.ops.crossdev, op).out(*args, out=out)
    assert got.data_ptr() == out.data_ptr()
    torch.testing.assert_close(out, want, rtol=0, atol=0)


@pytest.mark.parametrize("op", OPS)
def test_out_of_the_wrong_size_is_refused(op):
    args = inputs(op)
    want = getattr(torch.ops.crossdev, op)(*args)
    wrong = torch.empty(want.numel() + 1)
    with pytest.raises(RuntimeError, match=rf"crossdev::{op}\.out: out has shape .* but the result has shape"):
        getattr(torch.ops.crossdev, op).out(*args, out=wrong)


@pytest.mark.parametrize("op", OPS)
def test_an_empty_out_is_resized(op):
    args = inputs(op)
    torch.manual_seed(0)
    want = getattr(torch.ops.crossdev, op)(*args)
    out = torch.empty(0)
    torch.manual_seed(0)
    getattr(torch.ops.crossdev, op).out(*args, out=out)
    assert out.shape == want.shape
    torch.testing.assert_close(out, want, rtol=0, atol=0)


@pytest.mark.parametrize("op", OPS)
def test_out_aliasing_an_input_is_refused(op):
    args = inputs(op)
    first = args[0]
    want = getattr(torch.ops.crossdev, op)(*args)
    if want.shape != first.shape:
        pytest.skip("the output is not shaped like the first input")
    with pytest.raises(RuntimeError, match=rf"crossdev::{op}\.out: out overlaps input"):
        getattr(torch.ops.crossdev, op).out(*args, out=first)


def test_out_of_the_wrong_dtype_is_refused():
    args = inputs("gelu_tanh")
    with pytest.raises(RuntimeError, match=r"crossdev::gelu_tanh\.out: out has dtype Double but the result is Float"):
        torch.ops.crossdev.gelu_tanh.out(*args, out=torch.empty(args[0].shape, dtype=torch.float64))


def test_out_refuses_inputs_that_require_grad():
    x = torch.randn(4, 8, requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        torch.ops.crossdev.gelu_tanh.out(x, out=torch.empty(4, 8))


def test_a_shape_the_kernel_cannot_take_names_the_op_and_argument():
    with pytest.raises(RuntimeError, match=r"modulate.*x must be \[B, T, D\], got \[2, 3\]"):
        torch.ops.crossdev.modulate(torch.randn(2, 3), torch.randn(2, 3), torch.randn(2, 3))


def test_a_dtype_mix_names_both_arguments():
    x, shift, scale = inputs("modulate")
    with pytest.raises(RuntimeError, match=r"input 'scale' is Double but 'x' is Float"):
        torch.ops.crossdev.modulate(x, shift, scale.double())


def test_a_device_mix_names_the_devices():
    x, shift, scale = inputs("modulate")
    with pytest.raises(RuntimeError, match=r"more than one device"):
        torch.ops.crossdev.modulate(x, shift, scale.to("meta"))


def test_a_schema_mismatch_is_a_clear_error():
    with pytest.raises(RuntimeError, match=r"crossdev::gelu_tanh\(\) expected at most 1 argument"):
        torch.ops.crossdev.gelu_tanh(torch.randn(3), torch.randn(3))
