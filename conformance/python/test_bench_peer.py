"""crossdev.bench (inputs and traffic model for Python) and the torch.compile peer's output."""
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT

PEER = ROOT / "bench" / "python" / "compile_bench.py"


@pytest.fixture(scope="module")
def bench_module(crossdev_module):
    if not hasattr(crossdev_module, "bench"):
        pytest.skip("crossdev was built without crossdev.bench (CROSSDEV_BUILD_BENCH=OFF)")
    return crossdev_module.bench


def test_make_inputs_is_deterministic_and_sized(bench_module):
    import torch
    a = bench_module.make_inputs("modulate", 1 << 20, "float32", "cpu", 0)
    b = bench_module.make_inputs("modulate", 1 << 20, "float32", "cpu", 0)
    c = bench_module.make_inputs("modulate", 1 << 20, "float32", "cpu", 1)
    assert sorted(a["tensors"]) == ["scale", "shift", "x"]
    assert a["tensors"]["x"].shape == (4, 256, 1024) and a["tensors"]["x"].dtype == torch.float32
    assert all(torch.equal(a["tensors"][k], b["tensors"][k]) for k in a["tensors"])
    assert not torch.equal(a["tensors"]["x"], c["tensors"]["x"])
    half = bench_module.make_inputs("modulate", 1 << 20, "bfloat16")
    assert half["tensors"]["x"].dtype == torch.bfloat16
    # bf16 values are the float64 values rounded: the same generator, then the cast.
    assert torch.equal(half["tensors"]["x"], a["tensors"]["x"].to(torch.bfloat16))


@pytest.mark.parametrize("op", ["bias_dropout_add_scale", "rms_norm", "layer_norm_modulate", "gelu_tanh", "swiglu",
                                "rotary", "scaled_masked_softmax"])
def test_every_layout_is_sized_by_its_granule(bench_module, op):
    (granule,) = [g for name, g, _ in bench_module.layouts() if name == op]
    for multiple in (1, 4):
        call = bench_module.make_inputs(op, multiple * granule, "float32")
        main = max(call["tensors"].values(), key=lambda t: t.numel())
        assert main.numel() == multiple * granule


def test_bad_size_names_the_granule(bench_module):
    with pytest.raises(ValueError, match="multiple of 262144"):
        bench_module.make_inputs("scaled_masked_softmax", 1024, "float32")
    with pytest.raises(ValueError, match="expected one of"):
        bench_module.make_inputs("modulate", 1024, "float8")


def test_traffic_model_counts_distinct_bytes(bench_module):
    import torch
    call = bench_module.make_inputs("modulate", 1 << 20, "float32")
    t = call["tensors"]
    out = torch.empty_like(t["x"])
    nbytes = lambda x: x.numel() * x.element_size()  # noqa: E731
    fwd, elements = bench_module.traffic("modulate", t, out, "fwd")
    assert elements == out.numel()
    assert fwd == sum(nbytes(x) for x in t.values()) + nbytes(out)
    fwd_bwd, _ = bench_module.traffic("modulate", t, out, "fwd_bwd")
    # fwd_bwd: the forward, then grad_out (the size of out) and the inputs again, plus one gradient per input.
    assert fwd_bwd == 2 * fwd + sum(nbytes(t[n]) for n in bench_module.grad_inputs("modulate"))
    # A broadcast view costs the storage it spans, not its logical size.
    expanded = dict(t, shift=t["shift"][:1].expand(4, 1024))
    fwd_broadcast, _ = bench_module.traffic("modulate", expanded, out, "fwd")
    assert fwd_broadcast == fwd - 3 * 1024 * 4


def test_compile_peer_emits_google_benchmark_json(bench_module, build_dir, tmp_path):
    matrix = tmp_path / "bench.yaml"
    matrix.write_text("suite: bench\ncases:\n  - {id: g, source: s, kind: op, op: gelu_tanh, sizes: [64K], "
                      "passes: [fwd]}\n  - {id: r, source: s, kind: policy_resolve, host: mps}\n")
    fake_bench = tmp_path / "cpp.json"
    fake_bench.write_text(json.dumps({"context": {"crossdev_peak_cpu_bytes_per_second": "1e10",
                                                  "crossdev_aten_threads": "1"},
                                      "benchmarks": [{"name": "x", "family_index": 0, "run_type": "iteration",
                                                      "real_time": 1, "cpu_time": 1, "time_unit": "us"}]}))
    out = tmp_path / "compile.json"
    env = dict(os.environ, CROSSDEV_BUILD_DIR=str(build_dir))
    proc = subprocess.run([sys.executable, str(PEER), "--matrix", str(matrix), "--out", str(out), "--bench-json",
                           str(fake_bench), "--repetitions", "2", "--min-time", "0.01",
                           "--merge-into", str(fake_bench)], capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(out.read_text())
    runs = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"]
    assert [r["name"] for r in runs] == ["gelu_tanh/compile/float32/64K/cpu/fwd"] * 2
    for r in runs:
        seconds = r["real_time"] * 1e-6
        assert r["bytes_per_call"] == 2 * 64 * 1024 * 4 and r["elements"] == 64 * 1024
        assert r["bytes_per_second"] == pytest.approx(r["bytes_per_call"] / seconds, rel=1e-6)
        assert r["bw_util"] == pytest.approx(r["bytes_per_second"] / 1e10, rel=1e-6)
        assert r["compile_seconds"] > 0
    aggregates = {b["aggregate_name"] for b in doc["benchmarks"] if b["run_type"] == "aggregate"}
    assert aggregates == {"mean", "median", "stddev", "cv"}
    assert doc["context"]["crossdev_aten_threads"] == "1"
    merged = json.loads(fake_bench.read_text())
    assert [b["name"] for b in merged["benchmarks"]][:2] == ["x", "gelu_tanh/compile/float32/64K/cpu/fwd"]
    assert merged["benchmarks"][1]["family_index"] == 1


def test_compile_peer_bad_matrix_exits_2(tmp_path, build_dir):
    matrix = tmp_path / "bad.yaml"
    matrix.write_text("suite: bench\ncases:\n  - {id: g, source: s, kind: op, op: gelu_tanh, sizes: [64Q]}\n")
    proc = subprocess.run([sys.executable, str(PEER), "--matrix", str(matrix), "--out", str(tmp_path / "o.json")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "64Q" in proc.stderr and str(matrix) in proc.stderr
