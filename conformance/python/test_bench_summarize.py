"""bench/summarize.py on synthetic runs: ratios from one run, targets met or missed by how much."""
import importlib.util
import json

import pytest

from conftest import ROOT


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


summarize = _load(ROOT / "bench" / "summarize.py", "bench_summarize")


def entry(name, us, bw_util=None, **counters):
    e = {"name": name, "run_name": name, "run_type": "iteration", "real_time": us, "cpu_time": us,
         "time_unit": "us", "iterations": 10, **counters}
    if bw_util is not None:
        e["bw_util"] = bw_util
    return e


def write(tmp_path, name, benchmarks, context=None):
    path = tmp_path / name
    path.write_text(json.dumps({"context": context or {}, "benchmarks": benchmarks}))
    return path


def test_ratios_and_targets(tmp_path):
    bench = write(tmp_path, "bench.json", [
        entry("gelu_tanh/fused/float32/8M/cpu/fwd", 1000.0, bw_util=0.9),
        entry("gelu_tanh/fallback/float32/8M/cpu/fwd", 3000.0, bw_util=0.3),
        entry("gelu_tanh/torchscript/float32/8M/cpu/fwd", 2000.0),
        entry("swiglu/fused/float32/8M/cpu/fwd", 2000.0, bw_util=0.6),
        entry("swiglu/fallback/float32/8M/cpu/fwd", 3000.0),
        entry("swiglu/fused/float32/1M/cpu/fwd", 100.0, bw_util=0.5),  # below 8M: no bandwidth target
        entry("policy/resolve/fast", 40.0 / 1000, allocs_per_op=0),
        entry("policy/resolve/allocating", 40.0 / 1000, allocs_per_op=2),
    ], {"crossdev_peak_cpu_bytes_per_second": "1e10"})
    compiled = write(tmp_path, "compile.json", [entry("gelu_tanh/compile/float32/8M/cpu/fwd", 800.0)])
    out = tmp_path / "summary.json"
    assert summarize.main([str(bench), str(compiled), "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    groups = {g["case"]: g for g in doc["groups"]}
    gelu = groups["gelu_tanh/float32/8M/cpu/fwd"]
    assert gelu["fused_vs_eager"] == pytest.approx(3.0)
    assert gelu["fused_vs_torchscript"] == pytest.approx(2.0)
    assert gelu["fused_vs_compile"] == pytest.approx(0.8)
    targets = {(t["target"], t["case"]): t for t in doc["targets"]}
    assert targets[("bandwidth", "gelu_tanh/float32/8M/cpu/fwd")]["met"]
    missed_bw = targets[("bandwidth", "swiglu/float32/8M/cpu/fwd")]
    assert not missed_bw["met"] and missed_bw["shortfall"] == pytest.approx(0.25)
    assert ("bandwidth", "swiglu/float32/1M/cpu/fwd") not in targets
    assert targets[("vs_eager", "gelu_tanh/float32/8M/cpu/fwd")]["met"]
    assert targets[("vs_eager", "swiglu/float32/8M/cpu/fwd")]["shortfall"] == pytest.approx(0.25)
    assert targets[("vs_compile", "gelu_tanh/float32/8M/cpu/fwd")]["shortfall"] == pytest.approx(0.2)
    resolve = {r["case"]: r["met"] for r in doc["resolve"]}
    assert resolve == {"policy/resolve/allocating": False, "policy/resolve/fast": True}


def test_median_of_repetitions_is_used(tmp_path):
    bench = write(tmp_path, "b.json", [entry("a/fused/float32/1M/cpu/fwd", t) for t in (10.0, 11.0, 50.0)]
                  + [entry("a/fallback/float32/1M/cpu/fwd", t) for t in (30.0, 33.0, 31.0)])
    out = tmp_path / "s.json"
    assert summarize.main([str(bench), "--json", str(out)]) == 0
    (group,) = json.loads(out.read_text())["groups"]
    assert group["fused_vs_eager"] == pytest.approx(31.0 / 11.0)


def test_bad_input_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{\n nope")
    assert summarize.main([str(bad)]) == 2
    assert f"{bad}:2:" in capsys.readouterr().err
