"""bench/python/peer_bench.py: every peer in one process, Google Benchmark's JSON schema, counters that
agree with each other, the allocator and thread configuration in the context. Tiny sizes, few
repetitions; no timing thresholds (speed targets live in the benchmarks)."""
import json
import os
import statistics
import subprocess
import sys

import pytest

from conftest import ROOT

DRIVER = ROOT / "bench" / "python" / "peer_bench.py"
sys.path.insert(0, str(ROOT / "bench" / "python"))
import host_config  # noqa: E402
import peer_impls  # noqa: E402

AGGREGATES = {"mean", "median", "stddev", "cv", "min", "max"}
K64 = 64 * 1024


@pytest.fixture(scope="module")
def bench_module(crossdev_module):
    if not hasattr(crossdev_module, "bench"):
        pytest.skip("crossdev was built without crossdev.bench (CROSSDEV_BUILD_BENCH=OFF)")
    return crossdev_module.bench


def drive(tmp_path, build_dir, matrix_rows, *args, env=None, name="out.json", parts="cases"):
    matrix = tmp_path / "bench.yaml"
    matrix.write_text("suite: bench\ncases:\n" + "".join(f"  - {row}\n" for row in matrix_rows))
    out = tmp_path / name
    full_env = dict(os.environ, CROSSDEV_BUILD_DIR=str(build_dir), **(env or {}))
    if "LD_PRELOAD" not in (env or {}):
        full_env.pop("LD_PRELOAD", None)  # the system allocator unless the test asks for another
    proc = subprocess.run([sys.executable, str(DRIVER), "--matrix", str(matrix), "--out", str(out),
                           "--repetitions", "2", "--min-time", "0.005", "--cache-dir", str(tmp_path / "inductor"),
                           "--parts", parts, *args], capture_output=True, text=True, env=full_env, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(out.read_text())


def by_name(doc):
    runs, aggregates = {}, {}
    for b in doc["benchmarks"]:
        target = aggregates if b["run_type"] == "aggregate" else runs
        target.setdefault(b["run_name"], []).append(b)
    return runs, aggregates


@pytest.fixture(scope="module")
def small_run(bench_module, build_dir, tmp_path_factory):
    """gelu_tanh fwd with every impl (torch.compile included), modulate fwd_bwd without compile."""
    return drive(tmp_path_factory.mktemp("drv"), build_dir,
                 ["{id: g, source: s, kind: op, op: gelu_tanh, sizes: [64K], passes: [fwd]}",
                  "{id: m, source: s, kind: op, op: modulate, sizes: [64K], passes: [fwd_bwd]}",
                  "{id: r, source: s, kind: policy_resolve, host: mps}"],
                 "--filter", "^(gelu_tanh/|modulate/(fused|fallback|aten)/)")


def test_every_peer_is_timed_in_google_benchmark_schema(small_run):
    runs, aggregates = by_name(small_run)
    expected = {f"gelu_tanh/{impl}/float32/64K/cpu/fwd" for impl in peer_impls.FWD_IMPLS}
    expected |= {f"modulate/{impl}/float32/64K/cpu/fwd_bwd" for impl in ("fused", "fallback", "aten")}
    expected |= {"stream_triad/aten.out/float32/64K/cpu/fwd", "stream_triad/aten/float32/64K/cpu/fwd"}
    assert set(runs) == expected
    for name, entries in runs.items():
        assert len(entries) == 2, name  # --repetitions 2 (the triad: one before the ops, one after)
        assert [e["repetition_index"] for e in entries] == list(range(len(entries)))
        for e in entries:
            assert e["time_unit"] == "us" and e["real_time"] > 0 and e["iterations"] >= 1 and e["label"] == "real cpu"
        assert {a["aggregate_name"] for a in aggregates[name]} == AGGREGATES
        median = next(a for a in aggregates[name] if a["aggregate_name"] == "median")
        assert median["real_time"] == pytest.approx(statistics.median(e["real_time"] for e in entries))
    families = [b["family_index"] for b in small_run["benchmarks"] if b["run_type"] == "iteration"]
    assert families == sorted(families)


def test_counters_are_present_and_consistent(small_run):
    runs, _ = by_name(small_run)
    context = small_run["context"]
    triad_median = float(context["crossdev_triad_64K_bytes_per_second"])
    triad = runs["stream_triad/aten.out/float32/64K/cpu/fwd"]
    assert triad_median == pytest.approx(statistics.median(e["bytes_per_second"] for e in triad))
    assert all(e["bytes_per_call"] == 3 * K64 * 4 for e in triad)
    for name, entries in runs.items():
        for e in entries:
            seconds = e["real_time"] * 1e-6
            assert e["bytes_per_second"] == pytest.approx(e["bytes_per_call"] / seconds, rel=1e-9), name
            assert e["items_per_second"] == pytest.approx(e["elements"] / seconds, rel=1e-9), name
            assert e["bw_util"] == pytest.approx(e["bytes_per_second"] / triad_median, rel=1e-9), name
            assert e["peak_bytes_per_second"] == pytest.approx(triad_median)
            assert e["minflt_per_call"] >= 0 and e["majflt_per_call"] >= 0
    # One traffic model for every impl of a case: kernel-only and allocating move the same compulsory bytes.
    gelu = {n.split("/")[1]: runs[n][0]["bytes_per_call"] for n in runs if n.startswith("gelu_tanh/")}
    assert set(gelu.values()) == {2 * K64 * 4}
    assert all(e["compile_seconds"] > 0 for e in runs["gelu_tanh/compile/float32/64K/cpu/fwd"])
    assert "compile_seconds" not in runs["gelu_tanh/fused/float32/64K/cpu/fwd"][0]


def test_context_records_allocator_threads_affinity_and_capability(small_run):
    import torch
    context = small_run["context"]
    assert context["crossdev_allocator"] == "system (glibc malloc)"
    assert context["crossdev_aten_threads"] == str(torch.get_num_threads())
    assert context["crossdev_affinity"] == host_config.affinity()
    assert context["crossdev_cpu_capability"] == torch.backends.cpu.get_cpu_capability()
    assert "same process" in context["crossdev_peak_cpu_method"]
    assert "gelu_tanh/fallback" not in context["crossdev_not_run"]


def test_page_faults_count_the_fresh_output_pages(bench_module, build_dir, tmp_path):
    """With the system allocator an 8M fp32 output (32 MiB, above glibc's largest mmap threshold) is
    fresh mmap'ed pages on every allocating call; ATen's out= kernel into a preallocated output is not.
    (ATen's peers, so the check is about the counter, whatever crossdev's kernels do.)"""
    doc = drive(tmp_path, build_dir, ["{id: g, source: s, kind: op, op: gelu_tanh, sizes: [8M], passes: [fwd]}"],
                "--impls", "aten.out,aten", "--no-compile")
    runs, _ = by_name(doc)
    faults = {n: statistics.median(e["minflt_per_call"] for e in runs[n]) for n in runs}
    pages = (8 << 20) * 4 / os.sysconf("SC_PAGE_SIZE")
    for op in ("gelu_tanh", "stream_triad"):
        allocating, kernel = faults[f"{op}/aten/float32/8M/cpu/fwd"], faults[f"{op}/aten.out/float32/8M/cpu/fwd"]
        assert allocating - kernel > pages / 4, (op, allocating, kernel)  # at least a quarter of the pages


@pytest.mark.skipif(host_config.find_tcmalloc() is None, reason="libtcmalloc-minimal4 is not installed")
def test_allocator_label_under_tcmalloc(bench_module, build_dir, tmp_path):
    lib = host_config.find_tcmalloc()
    doc = drive(tmp_path, build_dir, ["{id: g, source: s, kind: op, op: gelu_tanh, sizes: [64K], passes: [fwd]}"],
                "--impls", "fused.out", "--no-compile", env={"LD_PRELOAD": lib})
    # The mapped library (symlinks resolved), and how it got there.
    assert doc["context"]["crossdev_allocator"] == f"tcmalloc ({os.path.realpath(lib)}, LD_PRELOAD)"


def test_merge_into_a_crossdev_bench_json(bench_module, build_dir, tmp_path):
    cpp = tmp_path / "cpp.json"
    cpp.write_text(json.dumps({"context": {"crossdev_allocator": "system (glibc malloc)"}, "benchmarks": [
        {"name": "x/torchscript/float32/64K/cpu/fwd", "family_index": 0, "run_type": "iteration", "real_time": 1,
         "cpu_time": 1, "time_unit": "us"},
        {"name": "gelu_tanh/fused.out/float32/64K/cpu/fwd", "family_index": 1, "run_type": "iteration",
         "real_time": 1, "cpu_time": 1, "time_unit": "us"}]}))
    drive(tmp_path, build_dir, ["{id: g, source: s, kind: op, op: gelu_tanh, sizes: [64K], passes: [fwd]}"],
          "--impls", "fused.out", "--no-compile", "--merge-into", str(cpp))
    merged = json.loads(cpp.read_text())
    names = [b["name"] for b in merged["benchmarks"] if b["run_type"] == "iteration"]
    assert names[0] == "x/torchscript/float32/64K/cpu/fwd"
    assert names.count("gelu_tanh/fused.out/float32/64K/cpu/fwd") == 2  # the driver's two repetitions replaced it
    assert merged["context"]["crossdev_peers_allocator"] == "system (glibc malloc)"


SWEEP = """suite: bench_sweep
sweep: {sizes: [1K, 4K, 1M], dtypes: [float32], passes: [fwd], impls: [fused.out, fused, aten.out, aten],
        repetitions: 2, min_time: 0.005}
per_call: {shape_set: basic, shape: [2, 8, 64], dtype: float32, threads: 1, repetitions: 3, min_time: 0.005}
"""


def test_sweep_and_per_call_figures(bench_module, build_dir, tmp_path):
    """The sweep's sizes and impls come from its file; a case the matrix has (1M) keeps the matrix's impls;
    softmax's 1K and 4K become its 256K, named in the context; per-call figures carry no traffic model."""
    path = tmp_path / "sweep.yaml"
    path.write_text(SWEEP)
    doc = drive(tmp_path, build_dir, ["{id: g, source: s, kind: op, op: gelu_tanh, sizes: [1M], passes: [fwd]}"],
                "--sweep", str(path), "--no-compile", "--filter", "^(gelu_tanh|scaled_masked_softmax)/",
                parts="cases,sweep,per_call")
    runs, _ = by_name(doc)
    sweep_impls = ("fused.out", "fused", "aten.out", "aten")
    expected = {f"gelu_tanh/{i}/float32/{s}/cpu/fwd" for i in sweep_impls for s in ("1K", "4K")}
    expected |= {f"gelu_tanh/{i}/float32/1M/cpu/fwd" for i in peer_impls.FWD_IMPLS if i != "compile"}
    expected |= {f"scaled_masked_softmax/{i}/float32/{s}/cpu/fwd" for i in sweep_impls for s in ("256K", "1M")}
    expected |= {f"{op}/{i}/float32/{shape}/cpu/call" for op, shape in (("gelu_tanh", "2x8x64"),
                 ("scaled_masked_softmax", "2x4x8x16")) for i in ("functional", "fused", "torch.add", "aten.add")}
    expected |= {f"stream_triad/{i}/float32/{s}/cpu/fwd" for i in ("aten.out", "aten") for s in ("1K", "4K", "256K", "1M")}
    assert set(runs) == expected
    assert len(runs["gelu_tanh/fused/float32/2x8x64/cpu/call"]) == 3  # per_call.repetitions
    assert len(runs["gelu_tanh/fused/float32/4K/cpu/fwd"]) == 2       # sweep.repetitions
    call = runs["gelu_tanh/fused/float32/2x8x64/cpu/call"][0]
    assert call["aten_threads"] == 1 and call["elements"] == 2 * 8 * 64
    assert "bytes_per_second" not in call and "bw_util" not in call
    assert runs["gelu_tanh/fused.out/float32/1K/cpu/fwd"][0]["bw_util"] > 0
    context = doc["context"]
    assert "scaled_masked_softmax" in context["crossdev_sweep_notes"] and "1K -> 256K" in context["crossdev_sweep_notes"]
    assert context["crossdev_parts"] == "cases,sweep,per_call" and context["crossdev_per_call_threads"] == "1"


@pytest.mark.parametrize("args, expected", [
    (["--parts", "cases,nope"], "--parts: unknown nope"),
    (["--impls", "fused,nope"], "--impls: unknown nope"),
    (["--cpus", "1-0"], "runs backwards"),
    (["--repetitions", "0"], "--repetitions >= 1"),
])
def test_bad_options_exit_2(tmp_path, args, expected):
    proc = subprocess.run([sys.executable, str(DRIVER), *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and expected in proc.stderr


def test_bad_matrix_and_peers_exit_2_naming_the_file(tmp_path):
    matrix = tmp_path / "bad.yaml"
    matrix.write_text("suite: bench\ncases:\n  - {id: g, source: s, kind: op, op: gelu_tanh, sizes: [64Q]}\n")
    proc = subprocess.run([sys.executable, str(DRIVER), "--matrix", str(matrix), "--out", str(tmp_path / "o.json")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "64Q" in proc.stderr and str(matrix) in proc.stderr
    peers = tmp_path / "peers.yaml"
    peers.write_text("suite: bench_peers\npeers:\n  gelu_tanh: {aten: 'F.gelu(x', typo: 1}\n")
    proc = subprocess.run([sys.executable, str(DRIVER), "--peers", str(peers), "--out", str(tmp_path / "o.json")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and str(peers) in proc.stderr and "typo" in proc.stderr


@pytest.mark.parametrize("which", ["--matrix", "--peers"])
def test_a_repeated_key_is_bad_input_at_its_line(tmp_path, which):
    """The driver reads bench.yaml and peers.yaml under crossdev_yaml's rule (bench/python/yaml_input.py):
    PyYAML would silently keep the second value; the driver refuses the file at the key's line."""
    path = tmp_path / "dup.yaml"
    if which == "--matrix":
        path.write_text("suite: bench\ncases:\n  - {id: g, source: s, kind: op, op: gelu_tanh,\n"
                        "     sizes: [64K], sizes: [1M]}\n")
    else:
        path.write_text("suite: bench_peers\npeers:\n  gelu_tanh: {aten: 'F.gelu(x)',\n"
                        "              aten: 'x'}\n")
    proc = subprocess.run([sys.executable, str(DRIVER), which, str(path), "--out", str(tmp_path / "o.json")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{path}:4: duplicate key" in proc.stderr, proc.stderr


def test_a_matrix_that_is_not_text_is_bad_input(tmp_path):
    path = tmp_path / "binary.yaml"
    path.write_bytes(b"suite: bench\ncases: \xff\xfe\n")
    proc = subprocess.run([sys.executable, str(DRIVER), "--matrix", str(path), "--out", str(tmp_path / "o.json")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and f"{path}: not UTF-8 text" in proc.stderr, proc.stdout + proc.stderr
