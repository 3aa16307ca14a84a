"""crossdev_bench as a program: matrix errors (file:line, exit 2), flags, and a functional smoke run
whose JSON must carry the counters and the shape Google Benchmark's tools/compare.py reads.

Nothing here asserts a speed: the smoke run uses a tiny min_time and checks only that the numbers
are there and consistent with each other (bytes_per_second = bytes_per_call / time, ...).
"""
import json
import os
import subprocess
import textwrap

import pytest

from conftest import REAL_ACCELERATOR, ROOT


@pytest.fixture(scope="module")
def bench_exe(build_dir):
    exe = build_dir / "bin" / "crossdev_bench"
    if not exe.exists():
        pytest.skip(f"{exe} not built (CROSSDEV_BUILD_BENCH=OFF)")
    return exe


def run_bench(exe, *args, env=None, timeout=300):
    full_env = {k: v for k, v in os.environ.items() if k not in ("CROSSDEV_LOG_LEVEL", "CROSSDEV_BENCH_PROFILE")}
    full_env.update(env or {})
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, env=full_env, timeout=timeout,
                          cwd=ROOT)


HEADER = "suite: bench\ncases:\n"


# (name, rows after the header, line of the error, text the message must contain)
BAD_MATRICES = [
    ("unknown_kind", "  - {id: a, source: s, kind: opp, op: modulate, sizes: [1M]}\n", 3, "unknown kind 'opp'"),
    ("key_of_other_kind", "  - {id: a, source: s, kind: policy_resolve, host: mps, sizes: [1M]}\n", 3,
     "key 'sizes' does not apply to kind 'policy_resolve'"),
    ("unknown_op", "  - {id: a, source: s, kind: op, op: softmaxx, sizes: [1M]}\n", 3, "unknown op 'softmaxx'"),
    ("bad_size", "  - {id: a, source: s, kind: op, op: modulate,\n     sizes: [1M, 8Q]}\n", 4, "'8Q' is not valid"),
    ("size_off_layout", "  - {id: a, source: s, kind: op, op: scaled_masked_softmax, sizes: [1K]}\n", 3,
     "expected a multiple of 262144"),
    ("bad_dtype", "  - {id: a, source: s, kind: op, op: gelu_tanh, sizes: [1M], dtypes: [float8]}\n", 3,
     "'float8' is not valid; expected float16, bfloat16, float32, float64"),
    ("bad_impl", "  - {id: a, source: s, kind: op, op: gelu_tanh, sizes: [1M], impls: [fused, triton]}\n", 3,
     "'triton' is not valid; expected fused, fallback, torchscript"),
    ("missing_sizes", "  - {id: a, source: s, kind: op, op: gelu_tanh}\n", 3, "needs key 'sizes'"),
    ("bad_profile", "  - {id: a, source: s, kind: bandwidth, profile: forever}\n", 3, "unknown profile 'forever'"),
    ("bad_request", "  - {id: a, source: s, kind: policy_resolve, host: mps, request: 'cuda:x'}\n", 3, "cuda:x"),
    ("unknown_host", "  - {id: a, source: s, kind: policy_resolve, host: quantum-x9}\n", 3, "quantum-x9"),
    ("duplicate_id", "  - {id: a, source: s, kind: bandwidth}\n  - {id: a, source: s, kind: bandwidth}\n", 4,
     "duplicate id 'a'"),
    ("missing_source", "  - {id: a, kind: bandwidth}\n", 3, "missing required key 'source'"),
    ("duplicate_case", "  - {id: a, source: s, kind: op, op: swiglu, sizes: [1M]}\n"
                       "  - {id: b, source: s, kind: op, op: swiglu, sizes: [8M, 1024K], profile: long}\n", 4,
     "case fused/float32/1024K/cpu/fwd of op 'swiglu' is already registered by row a"),
    ("yaml_syntax", "  - {id: a, source: s, kind: bandwidth\n  - ]\n", 4, "YAML syntax error"),
]


@pytest.mark.parametrize("name, rows, line, expected", BAD_MATRICES, ids=[b[0] for b in BAD_MATRICES])
def test_bad_matrix_exits_2_with_file_and_line(bench_exe, tmp_path, name, rows, line, expected):
    path = tmp_path / f"{name}.yaml"
    path.write_text(HEADER + rows, encoding="utf-8")
    proc = run_bench(bench_exe, f"--crossdev_matrix={path}", "--benchmark_list_tests=true")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{path}:{line}:" in proc.stderr, proc.stderr
    assert expected in proc.stderr, proc.stderr


@pytest.mark.parametrize("flag, expected", [
    ("--crossdev_profile=forever", "unknown profile 'forever'"),
    ("--crossdev_threads=-3", "non-negative integer"),
    ("--crossdev_bogus=1", "unknown flag '--crossdev_bogus=1'"),
    ("--crossdev_matrix", "needs a value"),
    ("--benchmark_nonsense=1", "unrecognized"),
])
def test_bad_flags_exit_2(bench_exe, flag, expected):
    proc = run_bench(bench_exe, flag, "--benchmark_list_tests=true")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert expected in proc.stderr


def test_registration_follows_the_matrix_and_profile(bench_exe, tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(HEADER + textwrap.dedent("""\
          - {id: a, source: s, kind: op, op: swiglu, sizes: [256K, 1M], impls: [fused, fallback], passes: [fwd]}
          - {id: b, source: s, kind: op, op: rotary, sizes: [64K], dtypes: [bfloat16], profile: long,
             devices: [cpu], passes: [fwd_bwd], impls: [torchscript]}
          - {id: c, source: s, kind: policy_resolve, host: cuda-x2, request: "cuda:1"}
        """), encoding="utf-8")
    listed = run_bench(bench_exe, f"--crossdev_matrix={path}", "--benchmark_list_tests=true")
    assert listed.returncode == 0, listed.stderr
    names = listed.stdout.split()
    on_cuda = [n for n in names if "/cuda:" in n]
    assert [n for n in names if n not in on_cuda] == [
        "swiglu/fused/float32/256K/cpu/fwd/real_time", "swiglu/fallback/float32/256K/cpu/fwd/real_time",
        "swiglu/fused/float32/1M/cpu/fwd/real_time", "swiglu/fallback/float32/1M/cpu/fwd/real_time",
        "policy/resolve/c"]
    # Row a names no devices (cpu and cuda): a real cuda runs it too, timed by CUDA events (manual_time).
    assert set(on_cuda) == ({f"swiglu/{impl}/float32/{size}/cuda:0/fwd/manual_time" for impl in ("fused", "fallback")
                             for size in ("256K", "1M")} if REAL_ACCELERATOR == "cuda" else set())
    # The row's cuda device is not on this CPU host: it is named in the context, never run simulated.
    long = run_bench(bench_exe, f"--crossdev_matrix={path}", "--crossdev_profile=long", "--benchmark_list_tests=true",
                     env={"CROSSDEV_SIMULATE": "cuda:2"})
    assert "rotary/torchscript/bfloat16/64K/cpu/fwd_bwd/real_time" in long.stdout.split()


def test_profile_from_environment(bench_exe, tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(HEADER + "  - {id: l, source: s, kind: bandwidth, profile: long}\n", encoding="utf-8")
    default = run_bench(bench_exe, f"--crossdev_matrix={path}", "--benchmark_list_tests=true")
    assert default.returncode == 0 and default.stdout.split() == []
    long = run_bench(bench_exe, f"--crossdev_matrix={path}", "--benchmark_list_tests=true",
                     env={"CROSSDEV_BENCH_PROFILE": "long"})
    assert long.stdout.split() == ["bandwidth/stream_triad/cpu/real_time"]


def test_default_matrix_loads_and_every_name_has_six_fields(bench_exe):
    for profile in ("default", "long"):
        proc = run_bench(bench_exe, f"--crossdev_profile={profile}", "--benchmark_list_tests=true")
        assert proc.returncode == 0, proc.stderr
        names = proc.stdout.split()
        ops = [n for n in names if not n.startswith(("policy/", "bandwidth/"))]
        assert ops and all(len(n.split("/")) == 7 for n in ops), ops[:5]  # 6 fields + real_time
        assert len(set(names)) == len(names)


def test_every_op_accepts_its_bench_layout(bench_exe, tmp_path, crossdev_module):
    """Every registered op's fused, fallback and torchscript implementations run on its bench inputs
    (no case is skipped); the op list comes from the op table, not from this test."""
    ops = set(crossdev_module.ops.op_names())
    out = tmp_path / "all.json"
    proc = run_bench(bench_exe, "--benchmark_filter=^[a-z_]+/(fused|fallback|torchscript)/float32/1M/cpu/fwd/",
                     "--benchmark_min_time=0.001", f"--benchmark_out={out}", "--benchmark_out_format=json")
    assert proc.returncode == 0, proc.stderr
    runs = json.loads(out.read_text())["benchmarks"]
    errors = {b["name"]: b.get("error_message") for b in runs if b.get("error_occurred")}
    assert not errors
    assert {b["name"].split("/")[0] for b in runs} == ops and len(runs) == 3 * len(ops)


SMOKE_FILTER = ("^(modulate/(fused|fallback)/float32/1M/cpu/fwd/|rms_norm/fused/float32/1M/cpu/fwd_bwd/"
                "|policy/resolve/resolve\\.(cuda1\\.cuda-x2|parse\\.cuda1\\.cuda-x2)$|bandwidth/stream_triad/cpu/)")


@pytest.fixture(scope="module")
def smoke_json(bench_exe, tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "bench.json"
    # The seconds spelling of min_time is Google Benchmark >= 1.8's; the binary accepts it on 1.7 too.
    proc = run_bench(bench_exe, f"--benchmark_filter={SMOKE_FILTER}", "--benchmark_min_time=0.01s",
                     "--benchmark_repetitions=2", f"--benchmark_out={out}", "--benchmark_out_format=json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(out.read_text())


def iterations_of(doc, name):
    """Repetitions of one case; `name` without Google Benchmark's "/real_time" suffix."""
    return [b for b in doc["benchmarks"] if b["run_type"] == "iteration" and b["run_name"] in (name, name + "/real_time")]


def test_smoke_context_records_the_peak_and_the_setup(smoke_json):
    ctx = smoke_json["context"]
    assert float(ctx["crossdev_peak_cpu_bytes_per_second"]) > 0
    assert "stream_triad" in ctx["crossdev_peak_cpu_method"]
    assert int(ctx["crossdev_aten_threads"]) >= 1
    assert ctx["crossdev_execution"] == "real" and ctx["crossdev_profile"] == "default"


def test_smoke_context_records_allocator_affinity_and_capability(smoke_json):
    """The C++ bench records the configuration the Python driver records (bench/python/host_config.py)."""
    import sys
    import torch
    sys.path.insert(0, str(ROOT / "bench" / "python"))
    import host_config
    ctx = smoke_json["context"]
    expected = "system (glibc malloc)" if "tcmalloc" not in os.environ.get("LD_PRELOAD", "") else ctx["crossdev_allocator"]
    assert ctx["crossdev_allocator"] == expected
    assert ctx["crossdev_affinity"] == host_config.affinity()
    assert ctx["crossdev_cpu_capability"] == torch.backends.cpu.get_cpu_capability()


def test_smoke_op_counters_are_consistent(smoke_json):
    peak = float(smoke_json["context"]["crossdev_peak_cpu_bytes_per_second"])
    runs = iterations_of(smoke_json, "modulate/fused/float32/1M/cpu/fwd")
    assert len(runs) == 2
    for run in runs:
        seconds = run["real_time"] * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3}[run["time_unit"]]
        # modulate: x and out are [4, 256, 1024] fp32, shift/scale [4, 1024]: the compulsory bytes.
        assert run["bytes_per_call"] == (2 * 4 * 256 * 1024 + 2 * 4 * 1024) * 4
        assert run["elements"] == 1 << 20
        assert run["bytes_per_second"] == pytest.approx(run["bytes_per_call"] / seconds, rel=1e-3)
        assert run["items_per_second"] == pytest.approx(run["elements"] / seconds, rel=1e-3)
        # bw_util and bytes_per_second are rates over the same Google Benchmark time: equal up to
        # rounding, whatever the load (a separate clock around the loop drifted by up to 4e-3).
        assert run["bw_util"] == pytest.approx(run["bytes_per_second"] / peak, rel=1e-9)
        assert run["peak_bytes_per_second"] == pytest.approx(peak, rel=1e-6)
        assert "allocs_per_op" in run and run["label"] == "real cpu"
        assert run["minflt_per_call"] >= 0 and run["majflt_per_call"] >= 0


def test_smoke_backward_counts_more_traffic_than_forward(smoke_json):
    (run, *_), = [iterations_of(smoke_json, "rms_norm/fused/float32/1M/cpu/fwd_bwd")]
    x = 4 * 256 * 1024 * 4
    w = 1024 * 4
    # fwd: x, weight, out; bwd: grad_out + x + weight again, grads of x and weight.
    assert run["bytes_per_call"] == (x + w + x) + (x + x + w) + (x + w)


def test_smoke_resolve_is_allocation_free(smoke_json):
    for name in ("policy/resolve/resolve.cuda1.cuda-x2", "policy/resolve/resolve.parse.cuda1.cuda-x2"):
        runs = iterations_of(smoke_json, name)
        assert runs, name
        for run in runs:
            assert run["allocs_per_op"] == 0, (name, run["allocs_per_op"])
            assert run["label"].startswith("cuda:1 -> cuda:1 (honored)")


def test_smoke_triad_reports_its_bandwidth(smoke_json):
    runs = iterations_of(smoke_json, "bandwidth/stream_triad/cpu")
    assert runs and all(r["bytes_per_second"] > 0 and 0 < r["bw_util"] for r in runs)


def test_smoke_json_has_the_shape_compare_py_reads(smoke_json):
    """tools/compare.py (google/benchmark) partitions by name and time unit, then reads real_time and
    cpu_time of every repetition and run_type/aggregate_name; --benchmark_repetitions adds aggregates."""
    assert isinstance(smoke_json["context"], dict)
    for b in smoke_json["benchmarks"]:
        for key in ("name", "run_name", "run_type", "repetitions", "threads", "iterations", "real_time",
                    "cpu_time", "time_unit", "family_index", "per_family_instance_index"):
            assert key in b, (key, b["name"])
        assert b["time_unit"] in ("ns", "us", "ms", "s")
        assert b["run_type"] in ("iteration", "aggregate")
        if b["run_type"] == "aggregate":
            assert b["aggregate_name"] in ("mean", "median", "stddev", "cv")
        else:
            assert "repetition_index" in b
    names = {b["name"] for b in smoke_json["benchmarks"]}
    assert "modulate/fused/float32/1M/cpu/fwd/real_time_median" in names


def test_smoke_json_passes_the_gate_against_itself(smoke_json, tmp_path):
    import sys
    path = tmp_path / "b.json"
    path.write_text(json.dumps(smoke_json))
    proc = subprocess.run([sys.executable, "-m", "crossdev", "bench-gate", "--baseline", str(path), str(path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
