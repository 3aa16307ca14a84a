"""mylib's own tests, as its CI would run them: the ops work, and crossdev finds them equal to its
reference ops on every shape set, dtype and gradient (crossdev.run_matrix runs the matrix in this
process, so the Python custom op, which exists only here, is checked too)."""
import pathlib

import pytest
import torch

import mylib
import mylib.gelu  # noqa: F401  (registers torch.ops.mylib_py.gelu_tanh)
from mylib.device import get_device

crossdev = pytest.importorskip("crossdev", reason="crossdev's Python module: pip install it, or PYTHONPATH=<build>/python")
MATRICES = pathlib.Path(__file__).resolve().parents[1] / "matrices"


@pytest.fixture(scope="module", autouse=True)
def cpp_ops():
    mylib.load_library()


def assert_all_pass(results):
    ran = [r for r in results if r["execution"] != "not_run"]
    bad = [f'{r["id"]} [{r["status"]}] {r["message"]}' for r in ran if r["status"] != "pass"]
    assert ran and not bad, "\n".join(bad[:10])


def test_cpp_ops_pass_crossdev():
    assert_all_pass(crossdev.run_matrix(str(MATRICES / "ops.yaml")))


def test_python_op_passes_crossdev():
    assert_all_pass(crossdev.run_matrix(str(MATRICES / "python" / "ops.yaml")))


@pytest.mark.parametrize("op, args", [
    (lambda: torch.ops.mylib.fused_modulate.default, lambda: (torch.randn(2, 3, 67), torch.randn(2, 67), torch.randn(2, 67))),
    (lambda: torch.ops.mylib.rms_norm.default, lambda: (torch.randn(4, 67), torch.rand(67) + 0.5, 1e-5)),
    (lambda: torch.ops.mylib_py.gelu_tanh.default, lambda: (torch.randn(3, 67),)),
], ids=["fused_modulate", "rms_norm", "gelu_tanh"])
def test_ops_pass_opcheck(op, args):
    # Schema, fake (Meta) kernel, autograd registration, torch.compile: PyTorch's own checks.
    inputs = tuple(a.requires_grad_() if isinstance(a, torch.Tensor) else a for a in args())
    torch.library.opcheck(op(), inputs)


def test_get_device_agrees_with_crossdevs_cuda_first_preset_on_this_host():
    decision = crossdev.resolve([None], policy="cuda-first", hypothetical=False)[0]
    assert get_device() == decision["resolved_type"]
