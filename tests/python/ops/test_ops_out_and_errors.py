"""The `.out` overloads and the errors of torch.ops.crossdev: every op has `<op>.out`, which
writes into a given tensor and returns nothing (`-> ()`: a custom op that mutates an argument
must not also return it), resizes one of the wrong shape as ATen's out= overloads do
(at::native::resize_output: silently when it is empty, with ATen's warning when it had elements),
and refuses the wrong dtype or one that overlaps an input. Bad calls raise ATen's error types
(issue 23): a shape or a value out of range ValueError, a dtype TypeError, a device mix
RuntimeError, each naming the op, the argument and what was expected; they never crash and never
return a wrong result."""
import warnings

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
    returned = getattr(torch.ops.crossdev, op).out(*args, out=out)
    assert returned is None  # `-> ()`: a custom op that writes into out must not also return it
    torch.testing.assert_close(out, want, rtol=0, atol=0)


@pytest.mark.parametrize("op", OPS)
def test_out_of_the_wrong_size_is_resized_with_atens_warning(op, capfd):
    args = inputs(op)
    torch.manual_seed(0)
    want = getattr(torch.ops.crossdev, op)(*args)
    wrong = torch.full((want.numel() + 1,), float("nan"))
    capfd.readouterr()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.manual_seed(0)  # a random op (dropout) draws from the default generator: the same stream as `want`
        got = getattr(torch.ops.crossdev, op).out(*args, out=wrong)
    # ATen's TORCH_WARN: through torch.ops it reaches stderr (as torch.ops.aten.add.out's does),
    # through a Python binding with a warning handler it is a UserWarning.
    said = capfd.readouterr().err + "".join(str(w.message) for w in caught)
    assert "An output with one or more elements was resized since it had shape" in said, said
    assert wrong.shape == want.shape
    assert got is None  # `-> ()`
    torch.testing.assert_close(wrong, want, rtol=0, atol=0)


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


def test_a_shape_the_kernel_cannot_take_is_a_value_error_naming_the_op_and_argument():
    with pytest.raises(ValueError, match=r"crossdev::modulate: x must be \[B, T, D\], got \[2, 3\]"):
        torch.ops.crossdev.modulate(torch.randn(2, 3), torch.randn(2, 3), torch.randn(2, 3))


def test_the_out_overload_names_itself_in_its_errors():
    x, shift, scale = inputs("modulate")
    with pytest.raises(ValueError, match=r"crossdev::modulate\.out: shift must be \[B or 1, D\]"):
        torch.ops.crossdev.modulate.out(x, shift[:, :-1], scale, out=torch.empty_like(x))


def test_a_dtype_mix_is_a_type_error_naming_both_arguments():
    x, shift, scale = inputs("modulate")
    with pytest.raises(TypeError, match=r"input 'scale' is Double but 'x' is Float"):
        torch.ops.crossdev.modulate(x, shift, scale.double())


def test_an_integer_input_is_a_type_error():
    with pytest.raises(TypeError, match=r"crossdev::gelu_tanh: input 'x' must be floating point, got Long"):
        torch.ops.crossdev.gelu_tanh(torch.ones(3, dtype=torch.long))


def test_a_dropout_probability_outside_0_1_is_torch_dropouts_runtime_error():
    # torch.dropout's own check is a TORCH_CHECK (RuntimeError), with these words.
    with pytest.raises(RuntimeError, match=r"crossdev::bias_dropout_add_scale: dropout probability has to be between "
                                           r"0 and 1, but got 1\.5") as err:
        torch.ops.crossdev.bias_dropout_add_scale(torch.randn(4, 8), p=1.5, training=True)
    assert type(err.value) is RuntimeError


def test_a_device_mix_is_a_runtime_error_naming_the_devices():
    x, shift, scale = inputs("modulate")
    with pytest.raises(RuntimeError, match=r"more than one device") as err:
        torch.ops.crossdev.modulate(x, shift, scale.to("meta"))
    assert type(err.value) is RuntimeError  # as ATen's "Expected all tensors to be on the same device"


def test_the_harness_lists_every_failing_predicate_in_a_value_error():
    x, shift, scale = inputs("modulate")
    with pytest.raises(crossdev.ops.NotEligible) as err:
        crossdev.ops.run("modulate", "fallback", {"x": x, "shift": shift[:, :-1], "scale": scale.double()})
    assert isinstance(err.value, ValueError)
    assert "[modulate_shapes]" in str(err.value) and "[input_dtypes_consistent]" in str(err.value), str(err.value)


def test_a_schema_mismatch_is_a_clear_error():
    with pytest.raises(RuntimeError, match=r"crossdev::gelu_tanh\(\) expected at most 1 argument"):
        torch.ops.crossdev.gelu_tanh(torch.randn(3), torch.randn(3))
