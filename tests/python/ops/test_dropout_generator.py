"""crossdev::bias_dropout_add_scale draws its dropout mask from torch's generators, as ATen's dropout
does: `generator=None` is the device's default generator, so torch.manual_seed reproduces a call,
two successive calls drop different elements, an explicit torch.Generator reproduces a call without
touching the default one, and the backward passes gradient exactly where the forward kept.

The mask itself is the portable one keyed by the (seed, offset) the call draws
(impl/ops/generator_stream.h): a sim generator runs a CPU engine, so for one torch.manual_seed the
fused CPU kernel and the composite kernel (what sim runs) drop the same elements.
Bad input raises what ATen's dropout raises: a p outside [0, 1] and a generator of another device.
"""
import math

import pytest
import torch

import crossdev
from conftest import register_sim_where_allowed, requires_sim

crossdev.load()  # registers torch.ops.crossdev
OP = torch.ops.crossdev.bias_dropout_add_scale
SHAPE = (4, 67)  # ends mid-vector and mid 64-element block
P = 0.5
CUDA = pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device on this host"))
DEVICES = ["cpu", "sim", CUDA]


@pytest.fixture(scope="module", autouse=True)
def sim_backend():
    register_sim_where_allowed(crossdev)


def ones(device, requires_grad=False):
    return torch.ones(SHAPE, device=device, requires_grad=requires_grad)


def dropout(x, **kwargs):
    """x = 1, scale 1, no bias or residual: an element is 0 iff dropped, 1 / (1 - p) iff kept."""
    return OP(x, p=kwargs.pop("p", P), training=kwargs.pop("training", True), **kwargs)


def kept(out):
    return out.cpu() != 0


@pytest.mark.parametrize("device", DEVICES)
def test_manual_seed_reproduces_a_call(device):
    x = ones(device)
    torch.manual_seed(1234)
    first = dropout(x)
    torch.manual_seed(1234)
    again = dropout(x)
    torch.manual_seed(1235)
    other_seed = dropout(x)
    assert torch.equal(first.cpu(), again.cpu())
    assert not torch.equal(kept(first), kept(other_seed))
    # A real mask: about half kept, and kept elements scaled by 1 / (1 - p).
    assert 0.3 < kept(first).double().mean().item() < 0.7
    assert set(first.cpu().unique().tolist()) <= {0.0, 1.0 / (1.0 - P)}


@pytest.mark.parametrize("device", DEVICES)
def test_successive_calls_drop_different_elements(device):
    x = ones(device)
    torch.manual_seed(7)
    first, second = dropout(x), dropout(x)
    assert not torch.equal(kept(first), kept(second))
    # ... and the pair is reproducible from the seed.
    torch.manual_seed(7)
    assert torch.equal(kept(dropout(x)), kept(first))
    assert torch.equal(kept(dropout(x)), kept(second))


@pytest.mark.parametrize("device", DEVICES)
def test_explicit_generator_reproduces_and_leaves_the_default_alone(device):
    x = ones(device)
    generator = torch.Generator(device=device)
    generator.manual_seed(99)
    torch.manual_seed(0)
    default_before = dropout(x)  # the default generator's next stream, drawn once ...
    torch.manual_seed(0)
    first = dropout(x, generator=generator)
    generator.manual_seed(99)
    again = dropout(x, generator=generator)
    assert torch.equal(first.cpu(), again.cpu())
    # ... and still the default generator's next stream: the explicit generator did not touch it.
    assert torch.equal(dropout(x).cpu(), default_before.cpu())


@pytest.mark.parametrize("device", DEVICES)
def test_no_dropout_draws_nothing(device):
    x = ones(device)
    torch.manual_seed(5)
    expected = dropout(x)
    torch.manual_seed(5)
    assert torch.equal(dropout(x, training=False).cpu(), x.cpu())
    assert torch.equal(dropout(x, p=0.0).cpu(), x.cpu())
    assert torch.equal(dropout(x).cpu(), expected.cpu())  # the generator has not moved


@requires_sim
def test_fused_cpu_kernel_and_sim_composite_kernel_drop_the_same_elements():
    # One torch.manual_seed, two kernels: the fused CPU kernel, and the composite kernel sim runs with
    # its own generator (a CPU engine seeded alike draws the same (seed, offset)).
    torch.manual_seed(42)
    on_cpu = dropout(ones("cpu"))
    torch.manual_seed(42)
    on_sim = dropout(ones("sim"))
    assert torch.equal(on_cpu, on_sim.cpu())


def test_fused_and_composite_kernels_drop_the_same_elements_for_one_seed():
    # crossdev.ops.run with one seed hands the fused and the composite ("fallback") kernel a copy of
    # one generator; no sim needed, so this runs beside a real accelerator too.
    tensors = {"x": torch.ones(3, 4099)}  # several 64-element blocks and a ragged tail
    fused = crossdev.ops.run("bias_dropout_add_scale", "fused", tensors, {"p": 0.3}, True, 11)
    composite = crossdev.ops.run("bias_dropout_add_scale", "fallback", tensors, {"p": 0.3}, True, 11)
    assert torch.equal(kept(fused), kept(composite))
    assert torch.equal(fused, composite)


@pytest.mark.parametrize("device", DEVICES)
def test_backward_passes_gradient_where_the_forward_kept(device):
    x = ones(device, requires_grad=True)
    torch.manual_seed(3)
    out = dropout(x)
    out.backward(torch.ones_like(out), retain_graph=True)
    grad_once = x.grad.cpu().clone()
    assert torch.equal(grad_once != 0, kept(out))
    x.grad = None
    dropout(ones(device))  # the generator moves on; the saved backward must not
    out.backward(torch.ones_like(out))
    assert torch.equal(x.grad.cpu(), grad_once)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device on this host")
def test_cuda_generator_offset_advances_by_the_draws():
    generator = torch.Generator(device="cuda")
    generator.manual_seed(5)
    generator.set_offset(8)
    x = ones("cuda")
    first = dropout(x, generator=generator)
    numel = math.prod(SHAPE)
    assert generator.get_offset() == 8 + (numel + 3) // 4 * 4
    generator.manual_seed(5)
    generator.set_offset(8)
    assert torch.equal(dropout(x, generator=generator), first)


# ---- bad input -----------------------------------------------------------------------------


def aten_error(p):
    with pytest.raises(RuntimeError) as aten:
        torch.dropout(torch.ones(3), p, True)
    return str(aten.value)


@pytest.mark.parametrize("p", [1.5, -0.1, float("nan")])
@pytest.mark.parametrize("training", [True, False])
def test_p_outside_unit_interval_is_atens_error(p, training):
    message = aten_error(p)
    assert message.startswith("dropout probability has to be between 0 and 1")
    with pytest.raises(RuntimeError) as ours:
        dropout(ones("cpu"), p=p, training=training)
    assert message in str(ours.value)


@pytest.mark.parametrize("tensor_device,generator_device", [("cpu", "sim"), ("sim", "cpu")])
def test_generator_of_another_device_is_atens_error(tensor_device, generator_device):
    generator = torch.Generator(device=generator_device)
    # at::check_generator's words, which ATen's random ops raise for the same mistake.
    expected = f"Expected a '{tensor_device}' device type for generator but found '{generator_device}'"
    with pytest.raises(RuntimeError, match=expected):
        dropout(ones(tensor_device), generator=generator)
    with pytest.raises(RuntimeError, match=expected):  # with autograd too, before anything is drawn
        dropout(ones(tensor_device, requires_grad=True), generator=generator)


# Under AOTAutograd the generator state the forward saves for the backward would become a constant
# of the traced backward graph (every compiled step would replay the trace-time mask): a traced
# training call with gradients is refused, naming the op. Without gradients, or in eval mode, the
# op compiles, and a compiled forward still draws a fresh mask per call at run time.
def test_compiled_training_with_gradients_is_refused_naming_the_op():
    torch._dynamo.reset()
    step = torch.compile(lambda x: dropout(x).sum(), backend="aot_eager", fullgraph=True)
    with pytest.raises(Exception, match=r"crossdev::bias_dropout_add_scale: training=True with inputs that require "
                                        r"grad cannot be traced for autograd"):
        step(ones("cpu", requires_grad=True))


def test_compiled_forward_without_gradients_draws_per_call():
    torch._dynamo.reset()
    step = torch.compile(lambda x: dropout(x), backend="aot_eager", fullgraph=True)
    x = ones("cpu")
    torch.manual_seed(7)
    eager_first, eager_second = dropout(x), dropout(x)
    torch.manual_seed(7)
    compiled_first, compiled_second = step(x), step(x)
    assert torch.equal(compiled_first, eager_first)
    assert torch.equal(compiled_second, eager_second)
    assert not torch.equal(compiled_first, compiled_second)


def test_compiled_eval_mode_with_gradients_matches_eager():
    torch._dynamo.reset()
    x = torch.randn(SHAPE, requires_grad=True)
    step = torch.compile(lambda x: dropout(x, training=False).pow(2).sum(), backend="aot_eager", fullgraph=True)
    (compiled,) = torch.autograd.grad(step(x), x)
    (eager,) = torch.autograd.grad(dropout(x, training=False).pow(2).sum(), x)
    torch.testing.assert_close(compiled, eager)
