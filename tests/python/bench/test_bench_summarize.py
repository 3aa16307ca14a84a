"""bench/summarize.py on synthetic runs: ratios from one run, targets met or missed, noisy figures marked."""
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
M8 = 8 << 20


def entry(name, us, bytes_per_call=None, **counters):
    e = {"name": name, "run_name": name, "run_type": "iteration", "real_time": us, "cpu_time": us,
         "time_unit": "us", "iterations": 10, **counters}
    if bytes_per_call is not None:
        e["bytes_per_call"] = float(bytes_per_call)
        e["bytes_per_second"] = bytes_per_call / (us * 1e-6)
    return e


def reps(name, times, bytes_per_call=None):
    return [entry(name, t, bytes_per_call) for t in times]


def write(tmp_path, name, benchmarks, context=None):
    path = tmp_path / name
    path.write_text(json.dumps({"context": context or {}, "benchmarks": benchmarks}))
    return path


def run(tmp_path, *docs):
    out, md = tmp_path / "summary.json", tmp_path / "summary.md"
    assert summarize.main([str(d) for d in docs] + ["--json", str(out), "--markdown", str(md)]) == 0
    doc = json.loads(out.read_text())
    return doc, {(t["target"], t["case"]): t for t in doc["targets"]}, md.read_text()


def test_targets_from_one_run(tmp_path):
    triad_bytes, op_bytes = 3 * M8 * 4, 2 * M8 * 4
    bench = write(tmp_path, "peers.json", [
        # triad: 10 GB/s at 8M
        entry("stream_triad/aten.out/float32/8M/cpu/fwd", triad_bytes / 10e9 * 1e6, triad_bytes),
        # rms_norm kernel-only at 9 GB/s (0.9 of the triad): met; swiglu at 5 GB/s: missed
        entry("rms_norm/fused.out/float32/8M/cpu/fwd", op_bytes / 9e9 * 1e6, op_bytes),
        entry("swiglu/fused.out/float32/8M/cpu/fwd", op_bytes / 5e9 * 1e6, op_bytes),
        # gelu: fused.out 1000 us vs ATen's kernel 800 us (0.8x: missed)
        entry("gelu_tanh/fused.out/float32/8M/cpu/fwd", 1000.0, op_bytes),
        entry("gelu_tanh/aten.out/float32/8M/cpu/fwd", 800.0, op_bytes),
        # allocating: fused 2000 vs aten 3000, compile 2500 (best peer 2500: 1.25x), fallback 6000 (3x)
        entry("gelu_tanh/fused/float32/8M/cpu/fwd", 2000.0, op_bytes),
        entry("gelu_tanh/aten/float32/8M/cpu/fwd", 3000.0, op_bytes),
        entry("gelu_tanh/compile/float32/8M/cpu/fwd", 2500.0, op_bytes),
        entry("gelu_tanh/fallback/float32/8M/cpu/fwd", 6000.0, op_bytes),
        # fwd_bwd at 1M: 1.2x the fallback (missed), 2x compile (met); at 256K: no fwd_bwd target
        entry("gelu_tanh/fused/float32/1M/cpu/fwd_bwd", 100.0),
        entry("gelu_tanh/fallback/float32/1M/cpu/fwd_bwd", 120.0),
        entry("gelu_tanh/compile/float32/1M/cpu/fwd_bwd", 200.0),
        entry("gelu_tanh/fused/float32/256K/cpu/fwd_bwd", 10.0),
        entry("gelu_tanh/fallback/float32/256K/cpu/fwd_bwd", 11.0),
        # below 8M: no forward target
        entry("swiglu/fused.out/float32/1M/cpu/fwd", 100.0, op_bytes / 8),
        entry("policy/resolve/fast", 40.0 / 1000, allocs_per_op=0),
        entry("policy/resolve/slow", 70.0 / 1000, allocs_per_op=0),
    ], {"crossdev_allocator": "system (glibc malloc)", "crossdev_cpu_capability": "AVX512",
        "crossdev_triad_8M_bytes_per_second": "1e10"})
    doc, targets, md = run(tmp_path, bench)
    roof = targets[("roofline", "rms_norm/float32/8M/cpu/fwd")]
    assert roof["value"] == pytest.approx(0.9) and roof["met"] and not roof["noisy"]
    missed = targets[("roofline", "swiglu/float32/8M/cpu/fwd")]
    assert missed["value"] == pytest.approx(0.5) and not missed["met"] and missed["shortfall"] == pytest.approx(1 - 0.5 / 0.85)
    assert ("roofline", "swiglu/float32/1M/cpu/fwd") not in targets
    assert ("roofline", "gelu_tanh/float32/8M/cpu/fwd") not in targets  # not a memory-bound op
    kernel = targets[("vs_aten_kernel", "gelu_tanh/float32/8M/cpu/fwd")]
    assert kernel["value"] == pytest.approx(0.8) and not kernel["met"]
    assert targets[("alloc_vs_best_peer", "gelu_tanh/float32/8M/cpu/fwd")]["value"] == pytest.approx(1.25)
    assert targets[("alloc_vs_fallback", "gelu_tanh/float32/8M/cpu/fwd")]["value"] == pytest.approx(3.0)
    assert not targets[("fwd_bwd_vs_fallback", "gelu_tanh/float32/1M/cpu/fwd_bwd")]["met"]
    assert targets[("fwd_bwd_vs_compile", "gelu_tanh/float32/1M/cpu/fwd_bwd")]["met"]
    assert ("fwd_bwd_vs_fallback", "gelu_tanh/float32/256K/cpu/fwd_bwd") not in targets
    # rms_norm has no allocating figures: its peer targets are listed as not measured, never dropped.
    assert targets[("alloc_vs_fallback", "rms_norm/float32/8M/cpu/fwd")]["value"] is None
    assert "| alloc_vs_fallback | rms_norm/float32/8M/cpu/fwd | - | 2.5 | not measured |" in md
    assert "| roofline | swiglu/float32/8M/cpu/fwd | 0.50 | 0.85 | MISSED (41% short) |" in md
    assert "missed: swiglu@8M" in md
    assert "Allocator: system (glibc malloc); CPU capability: AVX512" in md and "8M: 10.00 GB/s" in md
    assert {r["case"]: r["met"] for r in doc["resolve"]} == {"policy/resolve/fast": True, "policy/resolve/slow": False}


def test_median_of_repetitions_is_used_and_spread_kept(tmp_path):
    bench = write(tmp_path, "b.json", reps("a/fused/float32/1M/cpu/fwd", (10.0, 11.0, 50.0))
                  + reps("a/fallback/float32/1M/cpu/fwd", (30.0, 33.0, 31.0)))
    doc, _, _ = run(tmp_path, bench)
    (group,) = doc["groups"]
    assert group["fused_vs_eager"] == pytest.approx(31.0 / 11.0)
    fused = group["impls"]["fused"]
    assert fused["min_seconds"] == pytest.approx(10e-6) and fused["max_seconds"] == pytest.approx(50e-6)
    assert fused["noisy"] and not group["impls"]["fallback"]["noisy"]


def test_noisy_figures_are_marked_in_targets(tmp_path):
    op_bytes = 2 * M8 * 4
    steady, noisy = (1000.0, 1001.0, 999.0), (1000.0, 1300.0, 800.0)  # CV ~0.1% and ~24%
    bench = write(tmp_path, "b.json",
                  reps("gelu_tanh/fused/float32/8M/cpu/fwd", noisy, op_bytes)
                  + reps("gelu_tanh/fallback/float32/8M/cpu/fwd", [3 * t for t in steady], op_bytes)
                  + reps("swiglu/fused/float32/8M/cpu/fwd", steady, op_bytes)
                  + reps("swiglu/fallback/float32/8M/cpu/fwd", [3 * t for t in steady], op_bytes))
    _, targets, md = run(tmp_path, bench)
    gelu = targets[("alloc_vs_fallback", "gelu_tanh/float32/8M/cpu/fwd")]
    assert gelu["met"] and gelu["noisy"] and gelu["max_cv"] > 0.05
    swiglu = targets[("alloc_vs_fallback", "swiglu/float32/8M/cpu/fwd")]
    assert swiglu["met"] and not swiglu["noisy"]
    assert "| alloc_vs_fallback | gelu_tanh/float32/8M/cpu/fwd | 3.00 | 2.5 | met, noisy (CV 24%) |" in md
    assert "1.00 ms (24% noisy)" in md and "1.00 ms (0%)" in md


def test_kernel_only_figures_that_fault_like_allocating_ones_are_named(tmp_path):
    bench = write(tmp_path, "b.json", [
        entry("a/fused.out/float32/8M/cpu/fwd", 10.0, minflt_per_call=8193.0),
        entry("a/fused/float32/8M/cpu/fwd", 10.0, minflt_per_call=8193.0),
        entry("a/aten.out/float32/8M/cpu/fwd", 10.0, minflt_per_call=0.5),
        entry("a/aten/float32/8M/cpu/fwd", 10.0, minflt_per_call=8192.0)])
    doc, _, md = run(tmp_path, bench)
    checks = {r["impl"]: r["allocates"] for r in doc["page_faults"]}
    assert checks == {"fused.out": True, "aten.out": False}
    assert "| a/float32/8M/cpu/fwd | fused.out | 8193 | 8193 | allocates inside: not kernel-only |" in md


def test_later_files_override_and_contexts_merge(tmp_path):
    cpp = write(tmp_path, "cpp.json", [entry("a/fused/float32/1M/cpu/fwd", 50.0),
                                        entry("a/torchscript/float32/1M/cpu/fwd", 60.0)],
                {"crossdev_allocator": "old"})
    peers = write(tmp_path, "peers.json", [entry("a/fused/float32/1M/cpu/fwd", 30.0)],
                  {"crossdev_allocator": "tcmalloc (x, LD_PRELOAD)"})
    doc, _, md = run(tmp_path, cpp, peers)
    (group,) = doc["groups"]
    assert group["impls"]["fused"]["seconds"] == pytest.approx(30e-6) and "torchscript" in group["impls"]
    assert doc["context"]["crossdev_allocator"] == "tcmalloc (x, LD_PRELOAD)"


def test_bad_input_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{\n nope")
    assert summarize.main([str(bad)]) == 2
    assert f"{bad}:2:" in capsys.readouterr().err


def test_sweep_and_per_call_targets(tmp_path):
    """Issue 23: fused >= 1.0x the best ATen expression at every size of the sweep, one call <= 1.5x torch.add."""
    k1, k64 = 1024, 64 * 1024
    bench = write(tmp_path, "peers.json", [
        # sweep at 1K: fused 5 us, aten 10 us (2x: met); at 64K: fused 20 us, aten 16 us (0.8x: missed)
        entry("modulate/fused/float32/1K/cpu/fwd", 5.0), entry("modulate/aten/float32/1K/cpu/fwd", 10.0),
        entry("modulate/fused/float32/64K/cpu/fwd", 20.0), entry("modulate/aten/float32/64K/cpu/fwd", 16.0),
        # kernel-only at 64K: 4 GB/s against an 8 GB/s triad: reported as 0.5 of the triad (no target below 8M)
        entry("modulate/fused.out/float32/64K/cpu/fwd", 2 * k64 * 4 / 4e9 * 1e6, 2 * k64 * 4),
        entry("stream_triad/aten.out/float32/64K/cpu/fwd", 3 * k64 * 4 / 8e9 * 1e6, 3 * k64 * 4),
        entry("gelu_tanh/fused.out/float32/1K/cpu/fwd", 3.0, 2 * k1 * 4),  # no allocating figures: not measured
        # per call: crossdev.functional.modulate 1.8 us vs torch.add 1.5 us (1.2x: met; through torch.ops 3.0 us,
        # not the target's); gelu 6 us vs 1.5 us (4x: missed; torch.ops 1 us is not the target's either)
        entry("modulate/functional/float32/2x8x64/cpu/call", 1.8), entry("modulate/fused/float32/2x8x64/cpu/call", 3.0),
        entry("modulate/torch.add/float32/2x8x64/cpu/call", 1.5), entry("modulate/aten.add/float32/2x8x64/cpu/call", 2.4),
        entry("gelu_tanh/functional/float32/2x8x64/cpu/call", 6.0), entry("gelu_tanh/fused/float32/2x8x64/cpu/call", 1.0),
        entry("gelu_tanh/torch.add/float32/2x8x64/cpu/call", 1.5),
        # an op with dropout: the target reads its call path (functional), never its training call
        entry("bias_dropout_add_scale/functional/float32/2x8x64/cpu/call", 2.1),
        entry("bias_dropout_add_scale/functional.train/float32/2x8x64/cpu/call", 3.0),
        entry("bias_dropout_add_scale/torch.add/float32/2x8x64/cpu/call", 1.5),
        # a fwd_bwd figure at 1M: the Inductor target is still there
        entry("rms_norm/fused/float32/1M/cpu/fwd_bwd", 150.0), entry("rms_norm/compile/float32/1M/cpu/fwd_bwd", 100.0),
    ], {"crossdev_peers_sweep_notes": "scaled_masked_softmax: swept at 1K -> 256K",
        "crossdev_peers_per_call_threads": "1"})
    doc, targets, md = run(tmp_path, bench)
    met = targets[("fused_vs_aten_sweep", "modulate/float32/1K/cpu/fwd")]
    assert met["value"] == pytest.approx(2.0) and met["met"]
    missed = targets[("fused_vs_aten_sweep", "modulate/float32/64K/cpu/fwd")]
    assert missed["value"] == pytest.approx(0.8) and not missed["met"] and missed["shortfall"] == pytest.approx(0.2)
    assert targets[("fused_vs_aten_sweep", "gelu_tanh/float32/1K/cpu/fwd")]["value"] is None
    fine = targets[("per_call_vs_torch_add", "modulate/float32/2x8x64/cpu/call")]
    assert fine["value"] == pytest.approx(1.2) and fine["met"] and fine["maximum"] == 1.5 and fine["minimum"] is None
    slow = targets[("per_call_vs_torch_add", "gelu_tanh/float32/2x8x64/cpu/call")]
    assert slow["value"] == pytest.approx(4.0) and not slow["met"] and slow["shortfall"] == pytest.approx(4.0 / 1.5 - 1)
    # Per-call groups are no forward sweep case, and a sweep case is no per-call one.
    assert ("fused_vs_aten_sweep", "modulate/float32/2x8x64/cpu/call") not in targets
    assert ("per_call_vs_torch_add", "modulate/float32/1K/cpu/fwd") not in targets
    compiled = targets[("fwd_bwd_vs_compile", "rms_norm/float32/1M/cpu/fwd_bwd")]
    assert compiled["value"] == pytest.approx(100 / 150) and not compiled["met"]
    assert "| per_call_vs_torch_add | gelu_tanh/float32/2x8x64/cpu/call | 4.00 | <= 1.5 | MISSED (167% over) |" in md
    assert "| per_call_vs_torch_add | modulate/float32/2x8x64/cpu/call | 1.20 | <= 1.5 | met |" in md
    assert "| fused_vs_aten_sweep | modulate/float32/64K/cpu/fwd | 0.80 | 1 | MISSED (20% short) |" in md
    assert "needs <= 1.5 x torch.add's time): 2/3 met; missed: gelu_tanh@2x8x64" in md
    dropout = targets[("per_call_vs_torch_add", "bias_dropout_add_scale/float32/2x8x64/cpu/call")]
    assert dropout["value"] == pytest.approx(1.4) and dropout["met"]
    # The sweep and per-call tables, in Markdown and JSON; the per-call shape sorts by its elements.
    sweep = {r["size"]: r for r in doc["sweep"] if r["op"] == "modulate"}
    assert list(sweep) == ["1K", "64K"]
    assert sweep["64K"]["fused_vs_aten"] == pytest.approx(0.8) and sweep["64K"]["fused_out_vs_triad"] == pytest.approx(0.5)
    assert "| modulate | 64K | 20.0 us | 16.0 us | 0.80 | 4.0 | 8.0 | 0.50 |" in md
    assert "swept at 1K -> 256K" in md
    calls = {r["op"]: r for r in doc["per_call"]}
    assert calls["modulate"]["vs_torch_add"] == pytest.approx(1.2)
    assert calls["modulate"]["torch_ops_vs_torch_add"] == pytest.approx(2.0)
    assert calls["modulate"]["torch_ops_vs_aten_add"] == pytest.approx(1.25)
    assert calls["gelu_tanh"]["torch_ops_vs_aten_add"] is None
    assert "### Per call (1 ATen thread; bench/python/per_call.py)" in md
    assert "| modulate | [2, 8, 64] | 1.8 us | 3.0 us | 1.5 us | 2.4 us | 1.20 | 2.00 | 1.25 | - |" in md
    assert calls["bias_dropout_add_scale"]["train_vs_torch_add"] == pytest.approx(2.0)
    assert "| bias_dropout_add_scale | [2, 8, 64] | 2.1 us | - | 1.5 us | - | 1.40 | - | - | 2.00 |" in md
    assert summarize.size_elements("2x8x64") == 1024 and summarize.size_elements("256K") == 256 * 1024


def test_every_issue_23_target_is_in_the_table():
    names = {t.name for t in summarize.TARGETS}
    assert {"fused_vs_aten_sweep", "per_call_vs_torch_add", "fwd_bwd_vs_compile"} <= names
    per_call = next(t for t in summarize.TARGETS if t.name == "per_call_vs_torch_add")
    assert per_call.maximum == 1.5 and per_call.met(1.5) and not per_call.met(1.51)


def test_the_opinfo_sweeps_three_figures_are_ceilings(tmp_path):
    # bench/python/opinfo_sweep_bench.py's entries: the harness 200 s with a 1 GiB peak RSS, the bare loop 100 s
    bench = write(tmp_path, "opinfo.json", [
        entry("opinfo_sweep/harness/float32/16/sim/fwd_bwd", 200e6, peak_rss_bytes=float(1 << 30)),
        entry("opinfo_sweep/bare/float32/16/sim/fwd_bwd", 100e6)])
    _, targets, md = run(tmp_path, bench)
    case = "opinfo_sweep/float32/16/sim/fwd_bwd"
    wall, overhead, rss = (targets[(t, case)] for t in ("opinfo_sweep_wall", "opinfo_sweep_overhead", "opinfo_sweep_rss"))
    assert wall["value"] == pytest.approx(200.0) and wall["met"]            # <= 300 s
    assert overhead["value"] == pytest.approx(2.0) and not overhead["met"]  # <= 1.5x the bare loop
    assert rss["value"] == pytest.approx(1.0) and rss["met"]                # <= 2 GiB
    assert "| opinfo_sweep_overhead | opinfo_sweep/float32/16/sim/fwd_bwd | 2.00 | <= 1.5 | MISSED (33% over) |" in md


def test_cuda_cases_are_judged_against_the_cuda_triad_and_peers(tmp_path):
    # A GPU runner's peers (peer_bench.py --device cuda) get the same targets, each figure against the
    # same device's: the roofline against the cuda triad, not the CPU's; per call stays the host's.
    triad_bytes, op_bytes = 3 * M8 * 4, 2 * M8 * 4
    bench = write(tmp_path, "peers.json", [
        entry("stream_triad/aten.out/float32/8M/cpu/fwd", triad_bytes / 10e9 * 1e6, triad_bytes),
        entry("stream_triad/aten.out/float32/8M/cuda/fwd", triad_bytes / 2000e9 * 1e6, triad_bytes),
        # 1000 GB/s: 100x the CPU triad, half the cuda triad's 2000 GB/s: missed on its own device
        entry("rms_norm/fused.out/float32/8M/cuda/fwd", op_bytes / 1000e9 * 1e6, op_bytes),
        entry("rms_norm/fused/float32/8M/cuda/fwd", 30.0, op_bytes),
        entry("rms_norm/aten/float32/8M/cuda/fwd", 27.0, op_bytes),
    ])
    _, targets, md = run(tmp_path, bench)
    roofline = targets[("roofline", "rms_norm/float32/8M/cuda/fwd")]
    assert roofline["value"] == pytest.approx(0.5) and roofline["met"] is False
    sweep = targets[("fused_vs_aten_sweep", "rms_norm/float32/8M/cuda/fwd")]
    assert sweep["value"] == pytest.approx(0.9) and sweep["met"] is False
    assert "rms_norm@8M" in md


def test_target_devices_are_the_peer_drivers():
    import sys

    sys.path.insert(0, str(ROOT / "bench" / "python"))
    import peer_bench

    assert summarize.TARGET_DEVICES == peer_bench.DEVICE_KINDS
