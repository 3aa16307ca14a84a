"""Which kernel an OpInfo case ran on sim (crossdev.opinfo.kernel_source, docs/opinfo.md): read from the
dispatcher's table for PrivateUse1, for the ATen ops a dispatch mode saw. Needs sim (conftest registers it)."""
import torch

from conftest import requires_sim
from crossdev.opinfo import kernel_source


@requires_sim
def test_native_layer_norm_runs_its_composite_kernel_on_sim_and_tanh_the_cpu_kernel():
    x = torch.randn(3, 4).to("sim")
    norm = kernel_source.describe(lambda: torch.native_layer_norm(x, [4], None, None, 1e-5))
    assert norm["kernel_source"] == kernel_source.COMPOSITE, norm
    assert "composite: aten::native_layer_norm" in norm["device_kernels"], norm
    # the dispatcher agrees: CompositeExplicitAutograd has it, sim does not
    assert torch._C._dispatch_has_kernel_for_dispatch_key("aten::native_layer_norm", "CompositeExplicitAutograd")
    assert not torch._C._dispatch_has_kernel_for_dispatch_key("aten::native_layer_norm", "PrivateUse1")
    tanh = kernel_source.describe(lambda: torch.tanh(x))
    assert tanh == {"kernel_source": kernel_source.CPU_FALLBACK, "device_kernels": "cpu_fallback: aten::tanh"}


@requires_sim
def test_a_structured_backward_follows_its_out_overload_and_views_and_copies_do_not_count():
    # tanh_backward's functional form is a CompositeExplicitAutogradNonFunctional wrapper around
    # tanh_backward.grad_input, which sim runs through its backend fallback
    assert kernel_source.dispatch_entry("aten::tanh_backward") == kernel_source.CPU_FALLBACK
    x = torch.randn(3, 4).to("sim")
    moved = kernel_source.describe(lambda: x.t().contiguous().view(12))
    assert moved["kernel_source"] == kernel_source.SIM_KERNEL, moved
