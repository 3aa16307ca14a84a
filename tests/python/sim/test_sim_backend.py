"""The `sim` PrivateUse1 backend from Python: registration, round trips, the emulation profiles'
verbatim errors (with the Python exception types the real devices raise), memory statistics,
numerics emulation and the simulated-execution label."""
import gc

import pytest
import torch

from conftest import requires_sim

pytestmark = requires_sim  # sim is kept out of a process with a real accelerator

SAME_DEVICE = "Expected all tensors to be on the same device, but found at least two devices, {} and {}!"
MPS_FLOAT64 = ("Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64. "
               "Please use float32 instead.")


@pytest.fixture
def sim(crossdev_module):
    crossdev_module.sim.register()
    crossdev_module.sim.set_profile("plain")
    yield crossdev_module.sim
    gc.collect()
    crossdev_module.sim.set_profile("plain")


def test_registration_names_the_device_sim(sim):
    assert sim.is_registered()
    assert torch._C._get_privateuse1_backend_name() == "sim"
    t = torch.ones(2, 3, device="sim")
    assert str(t.device) == "sim:0"
    assert t.is_sim
    sim.register()  # idempotent
    assert torch.sim.device_count() == 1


def test_round_trip_is_bit_exact(sim):
    cpu = torch.randn(5, 7)
    on = cpu.to("sim")
    assert on.device.type == "sim"
    back = on.cpu()
    assert torch.equal(back, cpu)
    assert torch.equal(on.t().contiguous().cpu(), cpu.t().contiguous())


def test_ops_delegated_to_cpu_give_identical_results(sim):
    a, b = torch.randn(8, 16), torch.randn(16, 4)
    out = torch.softmax(a.to("sim") @ b.to("sim"), dim=1)
    assert out.device.type == "sim"
    assert torch.equal(out.cpu(), torch.softmax(a @ b, dim=1))
    assert "aten::_softmax.out" in sim.delegation_records()


def test_sparse_layouts_live_on_sim_and_their_ops_run_the_cpus_sparse_kernels(sim):
    """COO and CSR tensors on sim (sim_sparse.cpp): to_sparse builds a SparseTensorImpl whose indices
    and values are sim tensors; an op of a sparse sim tensor runs the CPU's sparse kernel on host copies
    (the sparse delegate keeps the layout: a CSR argument reaches SparseCsrCPU, not the dense CPU key)."""
    dense = torch.tensor([[0.0, 1.5], [-2.0, 0.0]])
    coo = dense.to("sim").to_sparse()
    assert coo.layout == torch.sparse_coo and coo.device.type == "sim" and coo._values().device.type == "sim"
    assert torch.equal(coo.cpu().to_dense(), dense) and coo._nnz() == 2
    csr = dense.to("sim").to_sparse_csr()
    out = torch.sparse.sampled_addmm(csr, dense.to("sim"), dense.to("sim"))
    assert out.layout == torch.sparse_csr and out.device.type == "sim"
    assert torch.equal(out.cpu().to_dense(), torch.sparse.sampled_addmm(dense.to_sparse_csr(), dense, dense).to_dense())


def test_a_sparse_kernel_that_reads_requires_grad_sees_it_on_the_host_copy(sim):
    """ATen's _sparse_mm_reduce_impl computes arg_out (what amax's backward indexes) only for an input
    that requires grad: the sparse delegate's CPU copies keep the flag, so the backward on sim gives the
    CPU's gradient (without it, it read an empty arg_out and segfaulted)."""
    a = torch.tensor([[0.0, 1.5, 0.5], [-2.0, 0.0, 3.0], [0.0, 0.0, 1.0]]).to_sparse_csr()
    b = torch.tensor([[1.0, -1.0], [2.0, 0.5], [-3.0, 4.0]])

    def grad_of_other(device):
        other = b.to(device).requires_grad_()
        out = torch.sparse.mm(a.to(device), other, "amax")
        (grad,) = torch.autograd.grad(out, other, torch.ones_like(out))
        return out.detach().cpu(), grad.cpu()

    assert all(torch.equal(s, c) for s, c in zip(grad_of_other("sim"), grad_of_other("cpu")))


def test_mixing_sim_and_cpu_raises_the_same_device_error(sim):
    with pytest.raises(RuntimeError) as err:
        torch.ones(2, 2, device="sim") + torch.ones(2, 2)
    assert str(err.value) == SAME_DEVICE.format("sim:0", "cpu")


def test_mps_like_rejects_float64_with_a_type_error(sim):
    sim.set_profile("mps-like")
    with pytest.raises(TypeError) as err:
        torch.zeros(2, dtype=torch.float64, device="sim")
    assert str(err.value) == MPS_FLOAT64
    with pytest.raises(TypeError):
        torch.zeros(2, dtype=torch.float64).to("sim")


def test_mps_like_mixing_raises_placeholder_storage(sim):
    sim.set_profile("mps-like")
    with pytest.raises(RuntimeError, match=r"^Placeholder storage has not been allocated on MPS device!$"):
        torch.nn.functional.linear(torch.ones(1, 4), torch.ones(2, 4, device="sim"))


def test_mps_like_unsupported_op_and_mps_cpu_switch(sim):
    sim.set_profile("mps-like", unsupported_ops=["aten::cumsum"], unsupported_ops_on_cpu=False)
    x = torch.arange(4.0).to("sim")
    with pytest.raises(NotImplementedError) as err:
        torch.cumsum(x, 0)
    assert str(err.value).startswith("The operator 'aten::cumsum.out' is not currently implemented for the MPS device.")
    assert "PYTORCH_ENABLE_MPS_FALLBACK=1" in str(err.value)

    sim.set_profile("mps-like", unsupported_ops=["aten::cumsum"], unsupported_ops_on_cpu=True)
    sim.reset_delegation_records()
    assert torch.equal(torch.cumsum(x, 0).cpu(), torch.tensor([0.0, 1.0, 3.0, 6.0]))
    record = sim.delegation_records()["aten::cumsum.out"]
    assert record["count"] == 1
    assert "MPS CPU switch" in record["reason"]


def test_tpu_like_inference_mode_raises_and_no_grad_works(sim):
    sim.set_profile("tpu-like")
    with pytest.raises(RuntimeError, match=r"^Cannot set version_counter for inference tensor$"):
        with torch.inference_mode():
            torch.ones(2, device="sim")
    with torch.no_grad():
        assert torch.equal((torch.ones(2, device="sim") * 3).cpu(), torch.full((2,), 3.0))


def test_cuda_like_has_n_devices_and_cuda_index_errors(sim):
    sim.set_profile("cuda-like", device_count=2)
    assert torch.sim.device_count() == 2
    x = torch.ones(3, device="sim:1")
    assert x.device == torch.device("sim", 1)
    assert (x + x).device == torch.device("sim", 1)
    with pytest.raises(RuntimeError, match=r"^CUDA error: invalid device ordinal$"):
        torch.ones(1, device="sim:2")
    del x


def test_memory_statistics_are_exact(sim):
    sim.empty_cache()
    before = sim.memory_stats(0)
    t = torch.empty(1000, device="sim")  # 4000 bytes -> 8 blocks of 512
    during = sim.memory_stats(0)
    assert during.allocated - before.allocated == 4000
    assert during.reserved - before.reserved == 4096
    assert during.num_allocs == before.num_allocs + 1 and during.simulated
    assert torch.sim.memory_allocated() == during.allocated
    del t
    assert sim.memory_stats(0).allocated == before.allocated
    sim.empty_cache()
    assert sim.memory_stats(0).reserved == before.reserved


def test_tf32_emulation_diverges_within_the_tf32_bound(sim):
    sim.set_profile("cuda-like", tf32_matmul=True)
    g = torch.Generator().manual_seed(11)
    k = 96
    a, b = torch.randn(32, k, generator=g), torch.randn(k, 24, generator=g)
    expected = a @ b
    actual = (a.to("sim") @ b.to("sim")).cpu()
    assert not torch.equal(actual, expected)
    bound = (a.abs() @ b.abs()) * (2.0 ** -10 + k * 2.0 ** -23)
    assert bool(((actual - expected).abs() <= bound).all())
    with pytest.raises(AssertionError):
        torch.testing.assert_close(actual, expected)  # beyond float32's default tolerance, as on real TF32


def test_seeding_reproduces_and_matches_cpu(sim):
    torch.manual_seed(1234)
    first = torch.randn(6, device="sim").cpu()
    torch.manual_seed(1234)
    assert torch.equal(torch.randn(6, device="sim").cpu(), first)
    assert torch.equal(first, torch.randn(6, generator=torch.Generator().manual_seed(1234)))


def test_device_for_labels_the_result_simulated(sim):
    info = sim.device_for("tpu", 0)
    assert info == {"device": "sim:0", "profile": "tpu-like", "execution": "simulated",
                    "label": "sim:0 (simulated xla:0, tpu-like)"}
    with pytest.raises(ValueError, match="unknown device kind 'gpu'"):
        sim.device_for("gpu", 0)
    with pytest.raises(ValueError, match="unknown sim profile 'mps'"):
        sim.set_profile("mps")
