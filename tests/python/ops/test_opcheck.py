"""crossdev's ops as PyTorch operators, judged by PyTorch's own tests.

`torch.library.opcheck` (schema, autograd registration, fake tensor, AOT dispatch with dynamic
shapes) runs on every overload of every op, `crossdev::<op>`, `crossdev::<op>.out` and
`crossdev::<op>_backward`, on every device the host has: cpu, the `sim` backend (PrivateUse1,
reached through CompositeExplicitAutograd) and cuda when torch.cuda.is_available(). Nobody here
wrote opcheck. `.default` runs every shape set in float32/bfloat16/float64; `.out` and
`_backward` every shape set but the 1M-element one in float64.
As in torch's `generate_opcheck_tests`, the failures a check is known to have are data
(EXPECTED_FAILURES, its failures dict): each such case must fail, with the expected message, and
every other case must pass; `pt2_compliant_tag` is on exactly the overloads with no expected
failure (test_pt2_compliant_tag_only_on_overloads_that_pass).
One gap is opcheck's own: its autograd-registration test raises NotImplementedError for any
device but cpu/cuda/xpu, so on sim that one test is replaced by autograd_kernel_check, which reads
the dispatcher's table for AutogradPrivateUse1 (and also runs on cpu/cuda, on top of opcheck's);
test_autograd_kernel_check_fails_on_an_op_without_an_autograd_kernel shows it can fail.
Then each op is compiled with torch.compile(fullgraph=True) and exported with torch.export, and
both must match eager. The op list is the registered one (crossdev.ops.op_names()), never a copy.
"""
import re

import pytest
import torch

import crossdev  # noqa: F401  (registers torch.ops.crossdev)
from autograd_kernel_check import autograd_kernel_check
from conftest import register_sim_where_allowed, requires_sim
from op_samples import op_arguments

OPS = crossdev.ops.op_names()
DTYPES = [torch.float32, torch.bfloat16, torch.float64]
DEVICES = ["cpu", "sim"] + (["cuda"] if torch.cuda.is_available() else [])
OVERLOADS = ("default", "out", "backward")
# .out and _backward: float64, the dtype opcheck's gradient checks are meant for (the kernels'
# other dtypes are .default's cases); the 1M-element shape set adds nothing the others do not.
SECONDARY_DTYPES = [torch.float64]
SECONDARY_SKIPPED_SHAPE_SETS = {"large"}

OPCHECK_TESTS = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")

# The failures dict of generate_opcheck_tests: (qualname, opcheck test) -> (the calls it fails
# on, a regex its error matches, why). An overload listed here is not pt2-compliant.
EXPECTED_FAILURES = {
    ("crossdev::bias_dropout_add_scale", "test_aot_dispatch_dynamic"): (
        lambda op, args: op == "bias_dropout_add_scale" and training_of(op, args),
        r"crossdev::bias_dropout_add_scale: training=True with inputs that require grad cannot be traced for autograd",
        "the backward redraws the forward's mask from a saved generator state, which AOTAutograd would bake into the "
        "backward graph as a constant; a traced training call with gradients is refused (test_dropout_generator.py)"),
    ("crossdev::bias_dropout_add_scale_backward", "test_aot_dispatch_dynamic"): (
        lambda op, args: op == "bias_dropout_add_scale" and training_of(op, args),
        r"crossdev::bias_dropout_add_scale_backward: double backward .* not supported in training mode",
        "AOT dispatch checks the gradient of the op, here a second derivative; in training mode the dropout "
        "mask is random and there is none (test_double_backward.py)"),
}


@pytest.fixture(scope="module", autouse=True)
def sim_backend():
    register_sim_where_allowed(crossdev)


def sample(op, shape_set, dtype, device, requires_grad=True):
    return op_arguments(op, shape_set, dtype, device, requires_grad)


def training_of(op, args):
    names = [a.name for a in getattr(torch.ops.crossdev, op).default._schema.arguments]
    return "training" in names and bool(args[names.index("training")])


def qualname(op, overload):
    return {"default": f"crossdev::{op}", "out": f"crossdev::{op}.out", "backward": f"crossdev::{op}_backward"}[overload]


def op_overload(op, overload):
    if overload == "backward":
        return getattr(torch.ops.crossdev, f"{op}_backward").default
    return getattr(getattr(torch.ops.crossdev, op), overload)


def overload_call(op, overload, shape_set, dtype, device):
    """(args, kwargs, args_for_the_autograd_check) of one call of the overload. `.out` refuses
    inputs that require grad (as ATen's out= overloads do), so its opcheck runs without them and
    the autograd-registration check gets the same call with them. `_backward` gets grad_out
    (shaped like the output) and the op's arguments, every differentiable one requiring grad:
    opcheck's AOT test then differentiates it (double backward)."""
    if overload == "default":
        args = sample(op, shape_set, dtype, device)
        return args, {}, args
    plain = sample(op, shape_set, dtype, device, requires_grad=False)
    result = getattr(torch.ops.crossdev, op)(*plain)
    if overload == "out":
        return plain, {"out": torch.empty_like(result)}, sample(op, shape_set, dtype, device)
    grad_out = torch.randn(result.shape, dtype=dtype, generator=torch.Generator().manual_seed(0)).to(device)
    args = [grad_out.requires_grad_(True)] + sample(op, shape_set, dtype, device)
    return args, {}, args


def cases():
    for overload in OVERLOADS:
        for op in OPS:
            for shape_set in crossdev.ops.shape_sets(op):
                if overload != "default" and shape_set in SECONDARY_SKIPPED_SHAPE_SETS:
                    continue
                for dtype in DTYPES if overload == "default" else SECONDARY_DTYPES:
                    for device in DEVICES:
                        yield pytest.param(op, overload, shape_set, dtype, device,
                                           id=f"{qualname(op, overload)}/{device}/{str(dtype).split('.')[-1]}/{shape_set}")


def test_every_registered_op_is_covered():
    # The op table and the dispatcher agree: every op of the table is a registered operator with
    # its .out overload and backward, and nothing else lives in the namespace.
    registered = {name.split("::")[1].split(".")[0] for name in torch._C._dispatch_get_all_op_names()
                  if name.startswith("crossdev::")}
    assert registered == set(OPS) | {f"{op}_backward" for op in OPS}
    for op in OPS:
        overloads = getattr(torch.ops.crossdev, op).overloads()
        assert sorted(overloads) == ["default", "out"], op
        assert getattr(torch.ops.crossdev, f"{op}_backward").overloads() == ["default"], op


def test_out_overloads_return_nothing():
    # A custom op that mutates an argument must not also return it (AOTAutograd refuses an output
    # with an alias annotation): `<op>.out(..., *, Tensor(a!) out) -> ()`.
    for op in OPS:
        schema = getattr(torch.ops.crossdev, op).out._schema
        assert len(schema.returns) == 0, str(schema)
        assert str(schema).endswith("Tensor(a!) out) -> ()"), str(schema)


@pytest.mark.parametrize("op,overload,shape_set,dtype,device", list(cases()))
def test_opcheck(op, overload, shape_set, dtype, device):
    args, kwargs, grad_args = overload_call(op, overload, shape_set, dtype, device)
    target = op_overload(op, overload)
    name = qualname(op, overload)
    tests = OPCHECK_TESTS if device in ("cpu", "cuda") else tuple(t for t in OPCHECK_TESTS if t != "test_autograd_registration")
    if overload == "out":  # autograd registration is checked on the call that requires grad, below
        tests = tuple(t for t in tests if t != "test_autograd_registration")
    result = torch.library.opcheck(target, args, kwargs, test_utils=tests, raise_exception=False)
    expected_failures = {test: EXPECTED_FAILURES[(name, test)] for test in tests if (name, test) in EXPECTED_FAILURES
                         and EXPECTED_FAILURES[(name, test)][0](op, args[1:] if overload == "backward" else args)}
    for test, (_, message, _) in expected_failures.items():
        assert result[test] != "SUCCESS", f"{name} {test} passed: remove it from EXPECTED_FAILURES (and tag the op)"
        assert re.search(message, str(result[test])), result[test]
    assert {t: r for t, r in result.items() if t not in expected_failures} == \
        {t: "SUCCESS" for t in tests if t not in expected_failures}, result
    if device in ("cpu", "cuda") and overload == "out":
        torch.library.opcheck(target, grad_args, {"out": kwargs["out"]}, test_utils=("test_autograd_registration",))
    autograd_kernel_check(target, grad_args, kwargs if overload == "out" else {})


def test_pt2_compliant_tag_only_on_overloads_that_pass():
    # generate_tag_tests' rule: an overload with an expected failure must not claim pt2
    # compliance; here also the converse: every overload that passes claims it.
    failing = {name for name, _ in EXPECTED_FAILURES}
    for op in OPS:
        for overload in OVERLOADS:
            name = qualname(op, overload)
            tagged = torch.Tag.pt2_compliant_tag in op_overload(op, overload).tags
            assert tagged == (name not in failing), f"{name}: tagged={tagged}, expected failures={name in failing}"


def probe_library():
    """crossdev_opcheck_probe: no_autograd (a PrivateUse1 and a CPU kernel, no CompositeExplicitAutograd
    one, no autograd kernel) and with_autograd (the same kernels and a registered autograd formula)."""
    lib = torch.library.Library("crossdev_opcheck_probe", "DEF")
    for name in ("no_autograd", "with_autograd"):
        lib.define(f"{name}(Tensor x) -> Tensor")
        for key in ("PrivateUse1", "CPU"):
            lib.impl(name, lambda x: x.cpu().mul(2).to(x.device), key)
    torch.library.register_autograd("crossdev_opcheck_probe::with_autograd", lambda ctx, g: g * 2, lib=lib)
    return lib


@requires_sim
def test_autograd_kernel_check_fails_on_a_sim_op_without_an_autograd_kernel():
    # The sim check can fail: an op with a PrivateUse1 kernel and no autograd kernel is refused;
    # given an Autograd kernel, the same op passes.
    lib = probe_library()
    try:
        x = torch.randn(4, 8, dtype=torch.float64).to("sim").requires_grad_(True)
        with pytest.raises(AssertionError, match=r"crossdev_opcheck_probe::no_autograd: inputs require grad but the "
                                                 r"dispatcher reaches no autograd kernel at AutogradPrivateUse1"):
            autograd_kernel_check(torch.ops.crossdev_opcheck_probe.no_autograd.default, (x,))
        autograd_kernel_check(torch.ops.crossdev_opcheck_probe.with_autograd.default, (x,))
    finally:
        lib._destroy()


def test_autograd_kernel_check_fails_on_a_cpu_op_without_an_autograd_kernel():
    # On the cpu, where opcheck's own check runs, the same op is refused too (no sim needed, so this
    # runs beside a real accelerator as well).
    lib = probe_library()
    try:
        x = torch.randn(4, 8, dtype=torch.float64, requires_grad=True)
        with pytest.raises(AssertionError, match="no autograd kernel at AutogradCPU"):
            autograd_kernel_check(torch.ops.crossdev_opcheck_probe.no_autograd.default, (x,))
        autograd_kernel_check(torch.ops.crossdev_opcheck_probe.with_autograd.default, (x,))
    finally:
        lib._destroy()


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
