"""The Meta kernels validate symbolic shapes (issue 23, item 5): a call traced with dynamic shapes
is checked by the same predicates as an eager one, with SymInt comparisons (guards or runtime
asserts, as TORCH_SYM_CHECK makes them), so a wrong shape fails while tracing with the op's own
message and error type instead of tracing cleanly and failing, or not, when the graph runs.

make_fx(tracing_mode="symbolic") runs only the Meta kernel (no CPU kernel ever sees the call);
torch.export with Dim.AUTO dynamic shapes does the same through FakeTensor."""
import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx

import crossdev  # noqa: F401  (loads torch.ops.crossdev)


def modulate(x, shift, scale):
    return torch.ops.crossdev.modulate(x, shift, scale)


def good_modulate_inputs():
    return torch.randn(2, 8, 64), torch.randn(2, 64), torch.randn(2, 64)


def test_a_well_shaped_call_traces_with_symbolic_sizes():
    graph = make_fx(modulate, tracing_mode="symbolic")(*good_modulate_inputs())
    placeholder = next(n for n in graph.graph.nodes if n.op == "placeholder")
    assert any(isinstance(d, torch.SymInt) for d in placeholder.meta["val"].shape)  # really symbolic
    x, shift, scale = torch.randn(3, 5, 64), torch.randn(3, 64), torch.randn(3, 64)
    torch.testing.assert_close(graph(x, shift, scale), torch.ops.crossdev.modulate(x, shift, scale))


def test_a_wrong_row_count_fails_symbolic_tracing_naming_the_op():
    x, shift, scale = good_modulate_inputs()
    with pytest.raises(ValueError, match=r"crossdev::modulate: shift must be \[B or 1, D\]"):
        make_fx(modulate, tracing_mode="symbolic")(x, torch.randn(3, 64), scale)


def test_a_wrong_rank_fails_symbolic_tracing_naming_the_op():
    with pytest.raises(ValueError, match=r"crossdev::modulate: x must be \[B, T, D\], got \[s\d+, s\d+\]"):
        make_fx(modulate, tracing_mode="symbolic")(torch.randn(2, 64), torch.randn(2, 64), torch.randn(2, 64))


def test_non_broadcasting_shapes_fail_symbolic_tracing():
    def swiglu(gate, up):
        return torch.ops.crossdev.swiglu(gate, up)

    with pytest.raises(ValueError, match=r"crossdev::swiglu: gate \[s\d+, s\d+\] and up \[s\d+, s\d+\] must broadcast"):
        make_fx(swiglu, tracing_mode="symbolic")(torch.randn(4, 6), torch.randn(4, 5))


def test_torch_export_with_dynamic_shapes_refuses_a_wrong_shape():
    class Call(torch.nn.Module):
        def forward(self, x, weight):
            return torch.ops.crossdev.rms_norm(x, weight, 1e-6)

    auto = torch.export.Dim.AUTO
    dynamic = ({0: auto, 1: auto}, {0: auto})
    exported = torch.export.export(Call(), (torch.randn(4, 8), torch.randn(8)), dynamic_shapes=dynamic)
    assert exported.module()(torch.randn(3, 8), torch.ones(8)).shape == (3, 8)
    with pytest.raises(Exception, match=r"crossdev::rms_norm: weight must be \[D\]") as err:
        torch.export.export(Call(), (torch.randn(4, 8), torch.randn(7)), dynamic_shapes=dynamic)
    chain = [err.value]  # export may wrap the kernel's error; the ValueError is in the chain
    while (chain[-1].__cause__ or chain[-1].__context__) is not None and len(chain) < 10:
        chain.append(chain[-1].__cause__ or chain[-1].__context__)
    assert any(isinstance(e, ValueError) for e in chain), [type(e) for e in chain]
