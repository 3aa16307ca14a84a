"""matrices/bench/peers.yaml: every registered op names its best native ATen expression, and each
expression computes the op's math (so the peer the bench times is the same work)."""
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench" / "python"))
import peer_impls  # noqa: E402

PEERS = peer_impls.load_peers()
RANDOM_OPS = {"bias_dropout_add_scale"}  # dropout: torch's RNG, not crossdev's portable mask


@pytest.fixture(scope="module")
def bench_module(crossdev_module):
    if not hasattr(crossdev_module, "bench"):
        pytest.skip("crossdev was built without crossdev.bench (CROSSDEV_BUILD_BENCH=OFF)")
    return crossdev_module.bench


def test_every_registered_op_has_a_peer_and_nothing_else(crossdev_module):
    assert sorted(PEERS) == sorted(crossdev_module.ops.op_names())


def _small(bench_module, op):
    (granule,) = [g for name, g, _ in bench_module.layouts() if name == op]
    return granule


@pytest.mark.parametrize("op", sorted(PEERS))
def test_aten_expression_computes_the_op(crossdev_module, bench_module, op):
    import torch
    inputs = peer_impls.CaseInputs(torch, crossdev_module, op, _small(bench_module, op), "float32", 0, "fwd")
    steps, missing = peer_impls.build_steps(inputs, PEERS, {}, ["aten", "aten.out"], compile_enabled=False)
    got = steps["aten"]()
    assert got.shape == inputs.out.shape and got.dtype == inputs.out.dtype
    if op not in RANDOM_OPS:
        finite = torch.isfinite(got)  # a fully masked softmax row is NaN in ATen, 0 in crossdev
        torch.testing.assert_close(got[finite], inputs.out[finite], rtol=1e-4, atol=1e-5)
    if "aten.out" in steps:
        out = steps["aten.out"]()
        assert out.shape == inputs.out.shape
        if "aten_out_note" not in PEERS[op]:
            torch.testing.assert_close(out, inputs.out, rtol=1e-4, atol=1e-5)
    else:
        assert "aten.out" in missing


def test_a_wrong_expression_is_caught(crossdev_module, bench_module, tmp_path):
    """The check above can fail: a peer with the wrong math differs from the op."""
    import torch
    bad = tmp_path / "peers.yaml"
    bad.write_text("suite: bench_peers\npeers:\n  gelu_tanh: {aten: \"F.gelu(x)\"}\n")  # erf, not tanh
    peers = peer_impls.load_peers(bad)
    inputs = peer_impls.CaseInputs(torch, crossdev_module, "gelu_tanh", _small(bench_module, "gelu_tanh"),
                                   "float32", 0, "fwd")
    steps, _ = peer_impls.build_steps(inputs, peers, {}, ["aten"], compile_enabled=False)
    with pytest.raises(AssertionError):
        torch.testing.assert_close(steps["aten"](), inputs.out, rtol=1e-6, atol=1e-7)
