"""crossdev.functional.<op>: torch.ops.crossdev.<op>.default called directly (issue 23's per-call
target). It must be the same op in every respect a caller can see: the result, arguments by
position or by name with the schema's defaults, autograd, torch's own errors, __torch_function__
(Tensor subclasses and TorchFunctionMode see the crossdev op), the dispatcher's Python modes
(TorchDispatchMode, FakeTensorMode: the fast path calls the dispatcher unboxed, and they see the
same op), the reference counts of its arguments, a torch.Generator, and torch.compile (Dynamo traces
the torch.ops overload: no graph break)."""
import gc
import inspect
import sys
import weakref

import pytest
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

import crossdev
import crossdev.functional as F
from op_samples import op_arguments

OPS = crossdev.ops.op_names()


def test_every_op_has_a_function_named_after_it():
    assert sorted(F.__all__) == sorted(OPS)
    assert F.modulate.__name__ == "modulate" and "crossdev::modulate(" in F.modulate.__doc__
    assert str(inspect.signature(F.rms_norm)) == "(x, weight, eps=1e-06)"


@pytest.mark.parametrize("op", OPS)
def test_the_same_result_as_torch_ops(op):
    args = op_arguments(op, "odd_tail", torch.float32, "cpu")
    torch.manual_seed(0)  # dropout draws from the default generator: the same stream both times
    want = getattr(torch.ops.crossdev, op)(*args)
    torch.manual_seed(0)
    got = getattr(F, op)(*args)
    torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_arguments_by_name_and_the_schemas_defaults():
    x, weight = torch.randn(2, 8, 64), torch.randn(64)
    want = torch.ops.crossdev.rms_norm(x, weight)  # eps: the schema's default
    torch.testing.assert_close(F.rms_norm(x, weight), want, rtol=0, atol=0)
    torch.testing.assert_close(F.rms_norm(weight=weight, x=x), want, rtol=0, atol=0)
    torch.testing.assert_close(F.rms_norm(x, weight, **{"eps": 0.5}), torch.ops.crossdev.rms_norm(x, weight, 0.5),
                               rtol=0, atol=0)
    torch.testing.assert_close(F.rms_norm(x, weight, eps=1), torch.ops.crossdev.rms_norm(x, weight, 1.0), rtol=0, atol=0)


def test_wrong_calls_raise_the_signatures_or_torchs_own_errors():
    x, shift, scale = torch.randn(2, 8, 64), torch.randn(2, 64), torch.randn(2, 64)
    # The arguments do not fit the schema's signature: Python's TypeError, naming the op.
    for args, kwargs in (((x, shift), {}), ((x, shift, scale, scale), {}), ((x, shift), {"scale": scale, "x": x}),
                         ((x, shift), {"scales": scale})):
        with pytest.raises(TypeError, match=r"modulate\(\)"):
            F.modulate(*args, **kwargs)
    # They fit, but torch.ops refuses one: the same error as torch.ops.
    for args in ((x, shift, "scale"), (x, shift, 2.0)):
        with pytest.raises((TypeError, RuntimeError)) as want:
            torch.ops.crossdev.modulate.default(*args)
        with pytest.raises(type(want.value)) as got:
            F.modulate(*args)
        assert str(got.value) == str(want.value)
    with pytest.raises(ValueError, match="modulate"):  # a shape the op refuses: ATen's error type, from the kernel
        F.modulate(x, torch.randn(3, 64), scale)


def test_autograd_is_the_ops():
    def grads(fn):
        x, shift, scale = (torch.randn(*s, dtype=torch.float64, generator=torch.Generator().manual_seed(i)).requires_grad_()
                           for i, s in enumerate(((2, 8, 64), (2, 64), (2, 64))))
        out = fn(x, shift, scale)
        out.pow(2).sum().backward()
        return out.grad_fn.name(), [t.grad for t in (x, shift, scale)]
    (name, got), (want_name, want) = grads(F.modulate), grads(torch.ops.crossdev.modulate)
    assert name == want_name
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=0, atol=0)


def test_torch_function_sees_the_crossdev_op():
    class Recorder(TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.funcs = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.funcs.append(func)
            return func(*args, **(kwargs or {}))

    x, shift, scale = torch.randn(2, 8, 64), torch.randn(2, 64), torch.randn(2, 64)
    with Recorder() as mode:
        F.modulate(x, shift, scale)
    assert mode.funcs == [torch.ops.crossdev.modulate.default]

    class Tagged(torch.Tensor):
        seen = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.seen.append(func)
            return super().__torch_function__(func, types, args, kwargs)

    F.modulate(x.as_subclass(Tagged), shift, scale)
    assert torch.ops.crossdev.modulate.default in Tagged.seen


def test_torch_dispatch_mode_sees_the_crossdev_op_with_its_arguments():
    # Plain tensors take the fast path; the dispatcher boxes the unboxed call for the Python mode.
    class Recorder(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.calls = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.calls.append((func, args))
            return func(*args, **(kwargs or {}))

    x, bias, residual = torch.randn(2, 8, 64), torch.randn(64), torch.randn(2, 8, 64)
    with Recorder() as mode:
        got = F.bias_dropout_add_scale(x, bias, None, residual, 0.5)
    funcs = [func for func, _ in mode.calls]
    assert torch.ops.crossdev.bias_dropout_add_scale.default in funcs
    _, args = mode.calls[funcs.index(torch.ops.crossdev.bias_dropout_add_scale.default)]
    assert args[0] is x and args[1] is bias and args[2] is None and args[3] is residual and args[4] == 0.5
    torch.testing.assert_close(got, torch.ops.crossdev.bias_dropout_add_scale(x, bias, None, residual, 0.5),
                               rtol=0, atol=0)


def test_fake_tensor_mode_gets_the_meta_result():
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        x, weight = torch.empty(3, 5, 64), torch.empty(64)
        out = F.rms_norm(x, weight)
    assert out.shape == (3, 5, 64) and out.dtype == torch.float32


def test_a_call_keeps_no_reference_to_its_arguments_or_result():
    x, bias, scale, residual = torch.randn(2, 8, 64), torch.randn(64), torch.randn(64), torch.randn(2, 8, 64)
    before = [sys.getrefcount(t) for t in (x, bias, scale, residual)]
    for _ in range(100):
        out = F.bias_dropout_add_scale(x, bias, scale, residual, 1.0, 0.1, True)
    assert [sys.getrefcount(t) for t in (x, bias, scale, residual)] == before
    released = weakref.ref(out)
    del out
    gc.collect()
    assert released() is None
    with pytest.raises(RuntimeError, match="dropout probability has to be between 0 and 1"):
        F.bias_dropout_add_scale(x, bias, scale, residual, 1.0, 1.5, True)  # an error releases them too
    assert [sys.getrefcount(t) for t in (x, bias, scale, residual)] == before


def test_a_generator_argument_goes_through_torch_ops():
    x, bias, residual = torch.randn(2, 8, 64), torch.randn(64), torch.randn(2, 8, 64)
    want = torch.ops.crossdev.bias_dropout_add_scale(x, bias, None, residual, 1.0, 0.5, True,
                                                     torch.Generator().manual_seed(3))
    got = F.bias_dropout_add_scale(x, bias, None, residual, 1.0, 0.5, True, generator=torch.Generator().manual_seed(3))
    torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_torch_compile_traces_the_torch_ops_overload_without_a_graph_break():
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    x, shift, scale = torch.randn(2, 8, 64), torch.randn(2, 64), torch.randn(2, 64)
    torch._dynamo.reset()
    compiled = torch.compile(lambda a, b, c: F.modulate(a, b, c) * 2, backend=backend, fullgraph=True)
    torch.testing.assert_close(compiled(x, shift, scale), torch.ops.crossdev.modulate(x, shift, scale) * 2,
                               rtol=0, atol=0)
    targets = [n.target for g in graphs for n in g.graph.nodes if n.op == "call_function"]
    assert torch.ops.crossdev.modulate.default in targets
