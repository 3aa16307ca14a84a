"""The DeviceManager API through the Python module: capabilities, memory, properties,
auto-detection, consistency helpers, streams/events, checkpoints (interoperable with
torch.save / torch.load) and the JSON-lines device-operation log."""
import importlib
import json
import pathlib

import pytest
import torch

MATRICES = pathlib.Path(__file__).resolve().parents[3] / "matrices"


@pytest.fixture(scope="module")
def mgr(crossdev_module):
    return crossdev_module.manager


def test_capabilities_follow_seeds_001_and_004(mgr):
    mps = mgr.DeviceManager("mps").capabilities("mps")
    assert set(mps["unsupported_dtypes"]) == {"float64", "complex128"}
    assert not mps["compile_supported"] and not mps["distributed_supported"]
    assert mps["distributed_reason"] == "Distributed training is not supported on MPS"
    xla = mgr.DeviceManager("tpu").capabilities("tpu")  # the seed 001 alias names the XLA device
    assert xla["device"] == "xla:0" and xla["inference_context"] == "no_grad" and xla["low_precision"] == "bfloat16"
    assert mgr.DeviceManager("cpu-only").capabilities("cpu")["simulated"] is False


def test_cpu_memory_stats_see_a_live_tensor(mgr, crossdev_module):
    m = mgr.DeviceManager("cpu-only")
    before = m.memory_stats("cpu")
    assert isinstance(before, crossdev_module.MemoryStats)  # the one record type, also sim.memory_stats's
    assert before.scope == "process" and not before.simulated
    block = torch.ones(32 << 20, dtype=torch.float32)  # 128 MiB
    during = m.memory_stats("cpu")
    del block
    after = m.memory_stats("cpu")
    assert during.allocated - before.allocated >= 128 << 20
    assert during.allocated - after.allocated >= 64 << 20
    assert during.peak_allocated >= 128 << 20 and during.total > during.allocated


def test_simulated_memory_invents_nothing(mgr):
    stats = mgr.DeviceManager("cuda-x1").memory_stats("cuda:0")
    assert stats.simulated and stats.allocated == -1 and stats.reserved == -1 and stats.peak_allocated == -1
    assert stats.total == 16 << 30
    assert mgr.DeviceManager("cuda-x1").empty_cache("cuda:0")["supported"] is False
    with pytest.raises(ValueError, match="not present"):
        mgr.DeviceManager("cuda-x1").memory_stats("mps")


def test_properties_masquerade_and_real(mgr):
    props = mgr.DeviceManager("mps").properties("mps")
    assert (props["major"], props["minor"], props["simulated"]) == (7, 0, True)
    cpu = mgr.DeviceManager("cpu-only").properties("cpu")
    assert cpu["simulated"] is False and cpu["total_memory"] > 0 and cpu["multi_processor_count"] >= 1


@pytest.mark.parametrize("host,policy,expected", [
    ("cuda+mps", None, "cuda:0"),        # seed 004: CUDA > MPS > CPU
    ("mps", None, "mps"),
    ("cpu-only", None, "cpu"),
    ("cuda+mps", "torchdevice", "mps"),  # seed 002 prefers MPS
])
def test_auto_detect(mgr, host, policy, expected):
    d = mgr.DeviceManager(host, policy=policy).auto_detect()
    assert d["device"] == expected and d["reason"]


def test_ensure_device_and_dtype_log_every_change(mgr):
    m = mgr.DeviceManager("mps")
    t = [torch.ones(2, dtype=torch.float64), torch.ones(2)]
    moved = m.ensure_device(t, devices=["cpu", "mps"])
    assert moved["target"] == "mps" and moved["devices"] == ["mps", "mps"]
    assert len(moved["moves"]) == 1 and moved["moves"][0]["from"] == "cpu" and moved["moves"][0]["reason"]
    cast = m.ensure_dtype(moved["tensors"], devices=moved["devices"])
    assert [x.dtype for x in cast["tensors"]] == [torch.float32, torch.float32]
    assert len(cast["casts"]) == 1 and "float64" in cast["casts"][0]["reason"]
    override = m.ensure_device(t, devices=["mps", "cpu"], target="cpu:-1")
    assert override["target"] == "cpu"


def test_device_chain_is_configurable(mgr):
    with pytest.raises(ValueError, match="must end with cpu"):
        mgr.DeviceManager("all", chain="xla,cuda")
    m = mgr.DeviceManager("all", chain="xla,cuda,cpu")
    r = m.device_safe(lambda ins, ctx: ins[0] + 1, [torch.zeros(2)], devices=["xla:0"],
                      faults=[{"device": "xla", "text": "Placeholder storage has not been allocated on MPS device!"}])
    assert r["report"]["chain_steps"][0]["to"] == "cuda:0"


def test_event_semantics_match_cuda(mgr):
    m = mgr.DeviceManager("cuda-x1")
    s = mgr.Stream(m, "cuda:0")
    a, b = mgr.Event(m, "cuda:0", enable_timing=True), mgr.Event(m, "cuda:0", enable_timing=True)
    assert s.emulated and a.query()
    with pytest.raises(ValueError, match="Both events must be recorded before calculating elapsed time."):
        a.elapsed_time(b)
    a.record(s)
    b.record(s)
    assert a.elapsed_time(b) >= 0.0
    untimed = mgr.Event(m, "cuda:0")
    untimed.record(s)
    with pytest.raises(ValueError, match="enable_timing=True"):
        untimed.elapsed_time(b)
    with pytest.raises(RuntimeError, match="does not match recording stream's device type"):
        mgr.Event(m, "cuda:0").record(mgr.Stream(m, "cpu"))


def test_checkpoint_is_torch_save_compatible(mgr, tmp_path):
    m = mgr.DeviceManager("cuda-x1")
    w = torch.randn(4, 3)
    path = tmp_path / "ours.pt"
    m.save_checkpoint(str(path), {"w": (w, "cuda:0")})
    # torch::pickle_save tags its typed dicts with torch.jit._pickle.restore_type_tag, which
    # weights_only loading accepts once allow-listed (docs/manager.md).
    jit_pickle = importlib.import_module("torch.jit._pickle")  # not imported by torch.jit itself
    with torch.serialization.safe_globals([jit_pickle.restore_type_tag]):
        raw = torch.load(str(path))
    assert raw["format"] == "crossdev-checkpoint/1" and raw["devices"] == {"w": "cuda:0"}
    assert torch.equal(raw["tensors"]["w"], w)
    # And the other way: a dict torch.save wrote loads through the map-location policy.
    theirs = tmp_path / "theirs.pt"
    torch.save({"format": "crossdev-checkpoint/1", "tensors": {"b": torch.arange(5.0, dtype=torch.float64)},
                "devices": {"b": "cuda:0"}}, str(theirs))
    loaded = mgr.DeviceManager("mps").load_checkpoint(str(theirs), "policy")["b"]
    assert loaded["device"] == "mps" and loaded["saved_device"] == "cuda:0"
    assert loaded["tensor"].dtype == torch.float32 and loaded["casts"]
    torch.testing.assert_close(loaded["tensor"], torch.arange(5.0))


def test_op_log_is_json_lines_with_categories(mgr, tmp_path):
    log = tmp_path / "device_log.jsonl"
    mgr.op_log_clear()
    mgr.set_device_log(str(log))
    try:
        m = mgr.DeviceManager("cuda-x1")
        m.device_safe(lambda ins, ctx: ins[0] * 3, [torch.ones(2)], devices=["cuda:0"],
                      faults=[{"device": "cuda", "type": "OutOfMemoryError", "text": "CUDA out of memory. Tried to allocate 2.00 MiB."}])
    finally:
        mgr.set_device_log("")
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    categories = [e["category"] for e in entries]
    for needed in ("fault", "attempt", "empty_cache", "recovery", "chain_step", "move"):
        assert needed in categories, categories
    assert all(e["duration_us"] >= 0 and "fields" in e for e in entries)
    summary = json.loads(mgr.op_log_summary())
    assert summary["format"] == "crossdev-device-log/1"
    assert summary["entries"] == len(mgr.op_log_entries()) == len(entries)
    assert summary["categories"]["attempt"]["count"] == 3  # error, error, ok


def test_sticky_cuda_error_logs_no_recovery(mgr):
    """An injected (C++) sticky CUDA error: one attempt in the log, no empty_cache, no chain step, no move."""
    mgr.op_log_clear()
    m = mgr.DeviceManager("cuda-x1")
    with pytest.raises(RuntimeError, match="device-side assert triggered"):
        m.device_safe(lambda ins, ctx: ins[0] * 3, [torch.ones(2)], devices=["cuda:0"],
                      faults=[{"device": "cuda", "text": "CUDA error: device-side assert triggered"}])
    entries = [json.loads(line) for line in mgr.op_log_entries()]
    categories = [e["category"] for e in entries]
    for absent in ("empty_cache", "recovery", "chain_step", "move"):
        assert absent not in categories, categories
    attempts = [e for e in entries if e["category"] == "attempt"]
    assert len(attempts) == 1 and attempts[0]["fields"]["category"] == "cuda_sticky_error", attempts
    assert "Restart the process" in attempts[0]["fields"]["reason"], attempts[0]
    sticky = {c["name"]: c for c in mgr.error_categories()}["cuda_sticky_error"]
    assert sticky["recovery"] == [["restart_process"]] and "CUDA" in sticky["source"]


def test_manager_and_errors_matrices_pass_through_the_harness(crossdev_module):
    for name in ("manager.yaml", "errors.yaml"):
        results = crossdev_module.run_matrix(str(MATRICES / name))
        assert results, name
        bad = [r for r in results if r["status"] in ("fail", "xpass", "error", "crash")]
        assert not bad, bad
        # Nothing on a simulated device may claim to be real.
        for r in results:
            if r["status"] == "skip":
                assert r["execution"] == "not_run"
