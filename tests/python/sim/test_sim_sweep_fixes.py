"""sim bugs the OpInfo sweep found (issue 24), fixed in sim (docs/sim-backend.md): copies of lazily
conjugated or negated tensors, and a "pinned" host buffer for `to("cpu", non_blocking=True)`; and the
harness's table of sample arguments that stay on the CPU (tensor_split's indices)."""
import types

import pytest
import torch

from conftest import requires_sim
from crossdev.opinfo import host_arguments

pytestmark = requires_sim


@pytest.fixture
def sim(crossdev_module):
    crossdev_module.sim.register()
    crossdev_module.sim.set_profile("plain")
    yield crossdev_module.sim


def test_resolving_a_conjugate_or_negative_view_copies_the_right_values(sim):
    z = torch.randn(6, dtype=torch.complex64)
    assert torch.equal(torch.conj(z.to("sim")).resolve_conj().cpu(), torch.conj(z).resolve_conj())  # segfaulted
    assert torch.equal(torch.conj(z.to("sim")).cpu(), torch.conj(z))  # a sim -> cpu copy keeps the conjugation
    x = torch.randn(6)
    assert torch.equal(torch._neg_view(x.to("sim")).resolve_neg().cpu(), -x)
    assert torch.equal(torch.fft.hfft(z.to("sim")).cpu(), torch.fft.hfft(z))


def test_a_non_blocking_copy_to_the_cpu_gets_a_host_buffer(sim):
    x = torch.randn(3, 4)
    y = x.to("sim").to("cpu", torch.float64, non_blocking=True, copy=True)  # asked for a pinned allocator
    assert y.device.type == "cpu" and torch.equal(y, x.double())


def test_tensor_splits_indices_stay_on_the_host_and_nothing_else_does():
    def SampleInput(input, args):  # what keep_on_host reads of op_db's SampleInput (importing op_db costs seconds)
        return types.SimpleNamespace(input=input, args=args, kwargs={})

    cpu = SampleInput(torch.ones(5), args=(torch.tensor([1, 3]),))
    moved = SampleInput(torch.ones(5, device="meta"), args=(torch.tensor([1, 3], device="meta"),))
    kept = host_arguments.keep_on_host(types.SimpleNamespace(name="tensor_split"), cpu, moved)
    assert kept.args[0].device.type == "cpu" and kept.input.device.type == "meta"
    other = SampleInput(torch.ones(5, device="meta"), args=(torch.tensor([1, 3], device="meta"),))
    assert host_arguments.keep_on_host(types.SimpleNamespace(name="split"), cpu, other).args[0].device.type == "meta"


@pytest.mark.parametrize("transposed", [False, True])
def test_convolution_has_a_backward_on_sim_equal_to_the_cpus(sim, transposed):
    torch.manual_seed(0)
    conv = torch.nn.functional.conv_transpose2d if transposed else torch.nn.functional.conv2d
    x, b = torch.randn(2, 3, 5, 5), torch.randn(4)
    w = torch.randn(3, 4, 3, 3) if transposed else torch.randn(4, 3, 3, 3)
    cpu = [t.clone().requires_grad_() for t in (x, w, b)]
    dev = [t.to("sim").requires_grad_() for t in (x, w, b)]
    out = conv(*cpu, stride=2, padding=1)
    grad = torch.randn_like(out)
    expected = torch.autograd.grad(out, cpu, grad)
    actual = torch.autograd.grad(conv(*dev, stride=2, padding=1), dev, grad.to("sim"))  # raised NotImplementedError
    for a, e in zip(actual, expected):
        assert a.device.type == "sim"
        torch.testing.assert_close(a.cpu(), e)
