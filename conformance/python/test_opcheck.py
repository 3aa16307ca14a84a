"""crossdev's ops as PyTorch operators, judged by PyTorch's own tests.

`torch.library.opcheck` (schema, autograd registration, fake tensor, AOT dispatch with dynamic
shapes) runs for every op x every shape set x float32/bfloat16/float64, on cpu and on the `sim`
backend (PrivateUse1, reached through CompositeExplicitAutograd). Nobody here wrote opcheck.
One gap is opcheck's own: its autograd-registration test raises NotImplementedError for any
device but cpu/cuda/xpu, so on sim that one test is replaced by the same check for the
AutogradPrivateUse1 key (autograd_registration_check, made to know the key); the other three run
unchanged.
Then each op is compiled with torch.compile(fullgraph=True) and exported with torch.export, and
both must match eager. The op list is the registered one (crossdev.ops.op_names()), never a copy.
"""
import pytest
import torch

import crossdev  # noqa: F401  (registers torch.ops.crossdev)
from op_samples import op_arguments

OPS = crossdev.ops.op_names()
DTYPES = [torch.float32, torch.bfloat16, torch.float64]
DEVICES = ["cpu", "sim"]


@pytest.fixture(scope="module", autouse=True)
def sim_backend():
    crossdev.sim.register()
    crossdev.sim.set_profile("plain")


def sample(op, shape_set, dtype, device, requires_grad=True):
    return op_arguments(op, shape_set, dtype, device, requires_grad)


def cases():
    for op in OPS:
        for shape_set in crossdev.ops.shape_sets(op):
            for dtype in DTYPES:
                for device in DEVICES:
                    yield pytest.param(op, shape_set, dtype, device,
                                       id=f"{op}/{device}/{str(dtype).split('.')[-1]}/{shape_set}")


def test_every_registered_op_is_covered():
    # The op table and the dispatcher agree: every op of the table is a registered operator with
    # its .out overload and backward, and nothing else lives in the namespace.
    registered = {name.split("::")[1].split(".")[0] for name in torch._C._dispatch_get_all_op_names()
                  if name.startswith("crossdev::")}
    assert registered == set(OPS) | {f"{op}_backward" for op in OPS}
    for op in OPS:
        overloads = getattr(torch.ops.crossdev, op).overloads()
        assert sorted(overloads) == ["default", "out"], op


OPCHECK_TESTS = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")


def autograd_registered_for_privateuse1(op):
    """opcheck's autograd_registration_check, for the key it does not know yet: an op whose inputs
    require grad must have a kernel at AutogradPrivateUse1, Autograd or CompositeImplicitAutograd."""
    return any(torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), key)
               for key in ("AutogradPrivateUse1", "Autograd", "CompositeImplicitAutograd"))


@pytest.mark.parametrize("op,shape_set,dtype,device", list(cases()))
def test_opcheck(op, shape_set, dtype, device):
    args = sample(op, shape_set, dtype, device)
    overload = getattr(torch.ops.crossdev, op).default
    if device == "cpu":
        result = torch.library.opcheck(overload, args)
        assert result == {name: "SUCCESS" for name in OPCHECK_TESTS}, result
        return
    assert any(isinstance(a, torch.Tensor) and a.requires_grad for a in args)
    assert autograd_registered_for_privateuse1(overload)
    tests = tuple(t for t in OPCHECK_TESTS if t != "test_autograd_registration")
    result = torch.library.opcheck(overload, args, test_utils=tests)
    assert result == {name: "SUCCESS" for name in tests}, result


def test_opcheck_fails_on_a_broken_meta_kernel():
    # The external judge can fail: a Meta kernel that lies about the shape is caught.
    lib = torch.library.Library("crossdev", "IMPL", "Meta")
    try:
        lib.impl("gelu_tanh", lambda x: x.new_empty(x.shape[:-1]))
        with pytest.raises(Exception):
            torch.library.opcheck(torch.ops.crossdev.gelu_tanh.default, sample("gelu_tanh", "basic", torch.float32, "cpu"))
    finally:
        lib._destroy()
    torch.library.opcheck(torch.ops.crossdev.gelu_tanh.default, sample("gelu_tanh", "basic", torch.float32, "cpu"))


def eager_and(op, transform):
    args = sample(op, "odd_tail", torch.float32, "cpu", requires_grad=False)
    fn = getattr(torch.ops.crossdev, op)
    torch.manual_seed(0)  # a random op (dropout) draws from the default generator: the same stream twice
    eager = fn(*args)
    torch.manual_seed(0)
    return eager, transform(fn, args)


@pytest.mark.parametrize("op", OPS)
def test_torch_compile_fullgraph_matches_eager(op):
    torch._dynamo.reset()

    def compiled(fn, args):
        return torch.compile(lambda *a: fn(*a), fullgraph=True)(*args)

    eager, result = eager_and(op, compiled)
    torch.testing.assert_close(result, eager)


@pytest.mark.parametrize("op", OPS)
def test_torch_export_matches_eager(op):
    def exported(fn, args):
        class Call(torch.nn.Module):
            def forward(self, *a):
                return fn(*a)
        ep = torch.export.export(Call(), tuple(args))
        assert any(n.target == fn.default for n in ep.graph.nodes if n.op == "call_function"), ep.graph
        return ep.module()(*args)

    eager, result = eager_and(op, exported)
    torch.testing.assert_close(result, eager)


def test_autograd_through_backward_and_compile():
    x = torch.randn(3, 5, 67, requires_grad=True)
    shift = torch.randn(3, 67, requires_grad=True)
    scale = torch.randn(3, 67, requires_grad=True)

    def f(x, shift, scale):
        return torch.ops.crossdev.gelu_tanh(torch.ops.crossdev.modulate(x, shift, scale)).sum()

    f(x, shift, scale).backward()
    eager_grads = [t.grad.clone() for t in (x, shift, scale)]
    for t in (x, shift, scale):
        t.grad = None
    torch.compile(f, fullgraph=True)(x, shift, scale).backward()
    for got, want in zip((x.grad, shift.grad, scale.grad), eager_grads):
        torch.testing.assert_close(got, want)
    # and against ATen's autograd over the reference composition
    for t in (x, shift, scale):
        t.grad = None
    ref = torch.nn.functional.gelu(x * (1 + scale[:, None]) + shift[:, None], approximate="tanh").sum()
    ref.backward()
    for got, want in zip((x.grad, shift.grad, scale.grad), eager_grads):
        torch.testing.assert_close(got, want)
