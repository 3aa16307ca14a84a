"""sim with the divergence switch on (CROSSDEV_SIM_DIVERGE, docs/sim-backend.md "Diverging from the CPU"):
it differs from the CPU wherever a real device of the kind may, and only by what a correct device may
return: its own random stream, other signs (phases) of factorizations that still reconstruct the input,
CUDA's save statistics in batch norm, TF32 operands under PyTorch's own TF32 flags, and another
reduction order (rounding only). The gradients stay right: the differences sit below autograd.
With the switch off sim is bit-identical with the CPU (test_sim_backend.py, test_cpu_delegate.cpp)."""
import json
import pathlib

import pytest
import torch

from conftest import requires_sim

pytestmark = requires_sim  # sim is kept out of a process with a real accelerator

ROOT = pathlib.Path(__file__).resolve().parents[3]


@pytest.fixture
def sim(crossdev_module):
    crossdev_module.sim.register()
    crossdev_module.sim.set_profile("cuda-like", diverge=True)
    yield crossdev_module.sim
    crossdev_module.sim.set_profile("plain")


def set_cudnn_tf32(on):
    """torch.backends.cudnn.allow_tf32 = on, also in a process where importing op_db froze cuDNN's flags
    (torch/testing/_internal/common_utils.py calls torch.backends.disable_global_flags()); PyTorch's own
    torch.backends.cudnn.flags() lifts the freeze the same way, but also resets every other cuDNN flag."""
    with getattr(torch.backends, "__allow_nonbracketed_mutation")():
        torch.backends.cudnn.allow_tf32 = on


@pytest.fixture
def tf32_flags():
    """PyTorch's TF32 flags, restored after the test."""
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    yield
    torch.backends.cuda.matmul.allow_tf32 = saved[0]
    set_cudnn_tf32(saved[1])


def data(*shape, seed=0, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def on_sim(t):
    return t.to("sim")


def leaf(t, device):
    """A fresh leaf copy of `t` on `device` that requires grad (t itself is left alone)."""
    return t.detach().clone().to(device).requires_grad_()


def to_tf32(t):
    """float32 rounded to TF32 (10 mantissa bits, nearest, ties to even), as numerics.cpp does."""
    bits = t.contiguous().view(torch.int32).to(torch.int64)
    bits = (bits + 0xFFF + ((bits >> 13) & 1)) & ~0x1FFF
    return bits.to(torch.int32).view(torch.float32)


# ------------------------------------------------------------------------------------- the switch


def test_switch_values_and_their_kinds(sim):
    assert sim.diverging_kinds("") == [] and sim.diverging_kinds("0") == []
    assert sorted(sim.diverging_kinds("all")) == sorted(sim.diverging_kinds("1")) == ["cuda", "mps", "xla", "xpu"]
    assert sim.diverging_kinds("cuda,tpu") == ["cuda", "xla"]
    with pytest.raises(ValueError, match=r"CROSSDEV_SIM_DIVERGE='sometimes': 'sometimes' is not a simulated device "
                                         r"kind; expected 0, 1, all, or a comma-separated list of"):
        sim.diverging_kinds("sometimes")


def test_the_environment_turns_it_on_per_kind(sim, monkeypatch):
    monkeypatch.setenv("CROSSDEV_SIM_DIVERGE", "mps")
    assert sim.set_profile("mps-like")["diverge"] is True
    assert sim.set_profile("cuda-like")["diverge"] is False
    assert sim.set_profile("plain")["diverge"] is False  # plain emulates no kind
    monkeypatch.setenv("CROSSDEV_SIM_DIVERGE", "maybe")
    with pytest.raises(ValueError, match="expected 0, 1, all"):
        sim.set_profile("cuda-like")


def test_a_bad_value_is_bad_input_for_the_cli(cli):
    proc = cli("run", "--matrix", ROOT / "matrices/context.yaml", "--simulate", "cuda", "--quiet",
               env={"CROSSDEV_SIM_DIVERGE": "cuda,gpu"})
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "CROSSDEV_SIM_DIVERGE='cuda,gpu': 'gpu' is not a simulated device kind; expected 0, 1, all" in proc.stderr


def test_the_bundle_says_which_kinds_diverged(cli, tmp_path):
    out = tmp_path / "b.json"
    proc = cli("run", "--matrix", ROOT / "matrices/context.yaml", "--simulate", "cuda,mps", "--out", out, "--quiet",
               env={"CROSSDEV_SIM_DIVERGE": "all"})
    assert proc.returncode in (0, 1), proc.stderr
    assert json.loads(out.read_text())["execution_target"]["sim_diverge"] == "cuda,mps"
    cli("run", "--matrix", ROOT / "matrices/context.yaml", "--simulate", "cuda", "--out", out, "--quiet",
        env={"CROSSDEV_SIM_DIVERGE": "0"})
    assert "sim_diverge" not in json.loads(out.read_text())["execution_target"]


# ------------------------------------------------------------------------------------- random stream


def test_own_random_stream_same_seed_other_numbers_reproducible(sim):
    def draw(device):
        torch.manual_seed(7)
        return torch.randn(256, device=device).cpu()

    first, cpu = draw("sim"), draw("cpu")
    assert torch.equal(first, draw("sim"))
    assert not torch.equal(first, cpu)
    g = torch.Generator(device="sim").manual_seed(7)
    assert g.initial_seed() == 7
    assert torch.equal(torch.randn(256, device="sim", generator=g).cpu(), first)
    sim.set_profile("cuda-like", diverge=False)
    assert torch.equal(draw("sim"), cpu)


# ------------------------------------------------------------------------------------- factor signs


def flipped_columns(device_factor, cpu_factor):
    """Columns where the device's factor is not the CPU's (the same up to a phase)."""
    d, c = device_factor.cpu(), cpu_factor
    return [j for j in range(c.shape[-1]) if not torch.equal(d[..., j], c[..., j])]


def test_eigh_vectors_other_signs_same_decomposition(sim):
    a = data(6, 6, dtype=torch.float64)
    a = a + a.mT
    w, v = torch.linalg.eigh(on_sim(a))
    w_cpu, v_cpu = torch.linalg.eigh(a)
    assert torch.equal(w.cpu(), w_cpu)
    assert flipped_columns(v, v_cpu) == [1, 3, 5]
    torch.testing.assert_close(v.cpu().abs(), v_cpu.abs(), rtol=0, atol=0)
    torch.testing.assert_close((v @ torch.diag_embed(w) @ v.mT).cpu(), a)


def test_complex_eigh_and_eig_get_other_phases_and_still_hold(sim):
    a = data(5, 5, dtype=torch.complex128)
    h = a + a.mH
    w, v = torch.linalg.eigh(on_sim(h))
    assert flipped_columns(v, torch.linalg.eigh(h)[1]) == [1, 3]
    torch.testing.assert_close((v @ torch.diag_embed(w.to(v.dtype)) @ v.mH).cpu(), h)
    w, v = torch.linalg.eig(on_sim(a))
    assert flipped_columns(v, torch.linalg.eig(a)[1]) == [1, 3]
    torch.testing.assert_close((on_sim(a) @ v).cpu(), (v * w.unsqueeze(-2)).cpu())


def test_svd_and_qr_factors_other_signs_reconstruct(sim):
    a = data(7, 4, dtype=torch.float64)
    u, s, vh = torch.linalg.svd(on_sim(a), full_matrices=False)
    u_cpu, s_cpu, vh_cpu = torch.linalg.svd(a, full_matrices=False)
    assert torch.equal(s.cpu(), s_cpu)
    assert flipped_columns(u, u_cpu) == [1, 3] and flipped_columns(vh.mT, vh_cpu.mT) == [1, 3]
    torch.testing.assert_close((u * s.unsqueeze(-2) @ vh).cpu(), a)
    q, r = torch.linalg.qr(on_sim(a))
    q_cpu, _ = torch.linalg.qr(a)
    assert flipped_columns(q, q_cpu) == [1, 3]
    torch.testing.assert_close((q @ r).cpu(), a)
    assert torch.equal(torch.linalg.qr(on_sim(a), mode="r")[1].cpu(), r.cpu())  # the same R whatever the mode


def test_gradients_through_flipped_factors_are_the_cpus(sim):
    """The flips sit below autograd: eigh's and svd's derivative formulas see the flipped factors, and a
    loss that does not depend on the signs has the CPU's gradient."""
    a = data(5, 5, dtype=torch.float64)
    a = a + a.mT

    def grad(device, fn):
        x = leaf(a, device)
        fn(x).backward()
        return x.grad.cpu()

    def eigh_loss(x):
        w, v = torch.linalg.eigh(x)
        return (v.pow(2) * torch.arange(5.0, dtype=x.dtype, device=x.device)).sum() + w.sum()

    def svd_loss(x):
        u, s, vh = torch.linalg.svd(x)
        return (u[:, :2] @ vh[:2]).sum() + s.sum()

    for fn in (eigh_loss, svd_loss):
        torch.testing.assert_close(grad("sim", fn), grad("cpu", fn))


# ------------------------------------------------------------------------------------- batch norm


def test_batch_norm_eval_save_stats_are_cuda_shaped(sim):
    x, rm, rv = data(4, 3, 5), data(3, seed=1), data(3, seed=2).abs() + 0.5
    w, b = data(3, seed=3), data(3, seed=4)
    for op in (torch.ops.aten.native_batch_norm, torch.ops.aten._native_batch_norm_legit):
        out, mean, invstd = op(*map(on_sim, (x, w, b, rm, rv)), False, 0.1, 1e-5)
        cpu_out, cpu_mean, _ = op(x, w, b, rm, rv, False, 0.1, 1e-5)
        assert cpu_mean.shape == (0,)
        assert mean.shape == (3,) and invstd.shape == (3,) and mean.dtype == torch.float32
        assert torch.equal(mean.cpu(), rm)
        torch.testing.assert_close(invstd.cpu(), (rv + 1e-5).rsqrt())
        assert torch.equal(out.cpu(), cpu_out)
    _, mean, invstd = torch.ops.aten._native_batch_norm_legit_no_training(*map(on_sim, (x, w, b, rm, rv)), 0.1, 1e-5)
    assert mean.shape == invstd.shape == (3,)


def test_batch_norm_eval_gradients_unchanged(sim):
    x, rm, rv, w = data(4, 3, 5), data(3, seed=1), data(3, seed=2).abs() + 0.5, data(3, seed=3)

    def grads(device):
        xs, ws = leaf(x, device), leaf(w, device)
        torch.nn.functional.batch_norm(xs, rm.to(device), rv.to(device), ws, training=False).pow(2).sum().backward()
        return xs.grad.cpu(), ws.grad.cpu()

    for got, want in zip(grads("sim"), grads("cpu")):
        torch.testing.assert_close(got, want)


def test_layer_norm_stats_in_cudas_dtype_for_bfloat16(sim):
    x = data(3, 8).to(torch.bfloat16)
    _, mean, rstd = torch.ops.aten.native_layer_norm(on_sim(x), [8], None, None, 1e-5)
    assert torch.ops.aten.native_layer_norm(x, [8], None, None, 1e-5)[1].dtype == torch.bfloat16  # the CPU's
    assert mean.dtype == rstd.dtype == torch.float32  # layer_norm_cuda: the accumulate type
    assert mean.shape == (3, 1)


@pytest.mark.parametrize("norm", ["layer_norm", "batch_norm"])
def test_bfloat16_norm_gradients_run_and_match_the_cpu(sim, norm):
    """The CPU's backward kernels insist on their forward's statistics dtype: sim hands them that dtype."""
    x, w = data(4, 6, 8).to(torch.bfloat16), data(6 if norm == "batch_norm" else 8, seed=1).to(torch.bfloat16)

    def grads(device):
        xs, ws = leaf(x, device), leaf(w, device)
        if norm == "layer_norm":
            y = torch.nn.functional.layer_norm(xs, [8], ws)
        else:
            y = torch.nn.functional.batch_norm(xs, None, None, ws, training=True)
        y.float().pow(2).sum().backward()
        return xs.grad.cpu().float(), ws.grad.cpu().float()

    for got, want in zip(grads("sim"), grads("cpu")):
        torch.testing.assert_close(got, want, rtol=2e-2, atol=2e-2)


# ------------------------------------------------------------------------------------- TF32


def test_mm_takes_tf32_operands_under_the_cuda_flag(sim, tf32_flags):
    a, b = data(32, 64), data(64, 16, seed=1)
    torch.backends.cuda.matmul.allow_tf32 = True
    got = (on_sim(a) @ on_sim(b)).cpu()
    assert not torch.equal(got, a @ b)
    assert torch.equal(got, to_tf32(a) @ to_tf32(b))
    c = data(32, 16, seed=2)
    assert torch.equal(torch.addmm(on_sim(c), on_sim(a), on_sim(b)).cpu(), torch.addmm(c, to_tf32(a), to_tf32(b)))
    torch.backends.cuda.matmul.allow_tf32 = False
    assert torch.equal((on_sim(a) @ on_sim(b)).cpu(), a @ b)


def test_tf32_only_where_the_profile_reads_the_flags(sim, tf32_flags):
    a, b = data(32, 64), data(64, 16, seed=1)
    torch.backends.cuda.matmul.allow_tf32 = True
    sim.set_profile("xpu-like", diverge=True)
    assert torch.equal((on_sim(a) @ on_sim(b)).cpu(), a @ b)


def test_convolution_takes_tf32_operands_under_the_cudnn_flag(sim, tf32_flags):
    x, w = data(2, 3, 9, 9), data(4, 3, 3, 3, seed=1)
    set_cudnn_tf32(True)
    got = torch.nn.functional.conv2d(on_sim(x), on_sim(w)).cpu()
    assert torch.equal(got, torch.nn.functional.conv2d(to_tf32(x), to_tf32(w)))
    assert not torch.equal(got, torch.nn.functional.conv2d(x, w))
    set_cudnn_tf32(False)
    assert torch.equal(torch.nn.functional.conv2d(on_sim(x), on_sim(w)).cpu(), torch.nn.functional.conv2d(x, w))


# ------------------------------------------------------------------------------------- reduction order

REDUCTIONS = {
    "sum": lambda t: t.sum(dim=-1),
    "sum_all": lambda t: t.sum(),
    "cumsum": lambda t: t.cumsum(dim=-1),
    "softmax": lambda t: torch.softmax(t, dim=-1),
    "log_softmax": lambda t: torch.log_softmax(t, dim=-1),
    "vector_norm": lambda t: torch.linalg.vector_norm(t, dim=-1),
    "norm": lambda t: torch.norm(t, dim=-1),
}


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reductions_differ_from_the_cpu_by_rounding_only(sim, name):
    fn = REDUCTIONS[name]
    x = data(16, 1000) * 10
    got, cpu = fn(on_sim(x)).cpu(), fn(x)
    assert got.shape == cpu.shape and got.dtype == cpu.dtype
    assert not torch.equal(got, cpu), "the same order as the CPU"
    exact = fn(x.double())
    # Rounding only: each within a few ulps of the summed magnitudes of the float64 result.
    scale = fn(x.double().abs()).abs() if name in ("sum", "sum_all", "cumsum") else exact.abs()
    tol = 1000 * torch.finfo(torch.float32).eps * scale + 1e-6
    assert ((got.double() - exact).abs() <= tol).all()
    assert ((cpu.double() - exact).abs() <= tol).all()


def test_reduction_gradients_are_the_cpus(sim):
    x = data(4, 100)

    def grad(device):
        t = leaf(x, device)
        (torch.softmax(t, -1).pow(2).sum() + t.cumsum(-1).sum() + torch.linalg.vector_norm(t, dim=-1).sum()).backward()
        return t.grad.cpu()

    torch.testing.assert_close(grad("sim"), grad("cpu"))
