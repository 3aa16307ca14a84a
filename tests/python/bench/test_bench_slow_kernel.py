"""The slowed op the benchmark baseline comparison is proven on (docs/benchmarks.md, "A slowed op, measured"):
libcrossdev_test_slow_kernel_rms_norm.so (tests/mutants/slow/) and peer_bench.py --load-library, wired
without timing anything: the library's kernels return the production results (and do run in place of the
production ones), and peer_bench loads the libraries it is given and names them in its context. How much
slower the library is lives in the measurement, never in a test."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT

DRIVER = ROOT / "bench" / "python" / "peer_bench.py"
sys.path.insert(0, str(ROOT / "bench" / "python"))
import peer_bench  # noqa: E402

OP = "rms_norm"
LIBRARY = f"crossdev_test_slow_kernel_{OP}"


@pytest.fixture(scope="module")
def bench_module(crossdev_module):
    if not hasattr(crossdev_module, "bench"):
        pytest.skip("crossdev was built without crossdev.bench (CROSSDEV_BUILD_BENCH=OFF)")
    return crossdev_module.bench


@pytest.fixture(scope="module")
def slow_library(built_library):
    return built_library(LIBRARY)


def drive(tmp_path, build_dir, *args):
    matrix = tmp_path / "bench.yaml"
    row = f"{{id: r, source: s, kind: op, op: {OP}, sizes: [1K], passes: [fwd]}}"
    matrix.write_text(f"suite: bench\ncases:\n  - {row}\n")
    out = tmp_path / "out.json"
    env = dict(os.environ, CROSSDEV_BUILD_DIR=str(build_dir))
    env.pop("LD_PRELOAD", None)
    proc = subprocess.run([sys.executable, str(DRIVER), "--build-dir", str(build_dir), "--matrix", str(matrix),
                           "--out", str(out), "--parts", "cases", "--impls", "fused.out,fused", "--no-compile",
                           "--repetitions", "1", "--min-time", "0.001", *args],
                          capture_output=True, text=True, env=env, timeout=600)
    return proc, (json.loads(out.read_text()) if out.exists() else None)


def test_peer_bench_loads_the_library_and_names_it_in_the_context(bench_module, build_dir, tmp_path, slow_library):
    proc, doc = drive(tmp_path, build_dir, "--load-library", str(slow_library))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert doc["context"]["crossdev_load_library"] == str(slow_library.resolve())
    rows = {b["run_name"] for b in doc["benchmarks"] if b["run_type"] == "iteration" and b["name"].startswith(OP)}
    assert rows == {f"{OP}/fused.out/float32/1K/cpu/fwd", f"{OP}/fused/float32/1K/cpu/fwd"}
    assert not any(b.get("error_occurred") for b in doc["benchmarks"])


def test_without_libraries_the_context_says_none(bench_module, build_dir, tmp_path):
    proc, doc = drive(tmp_path, build_dir)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert doc["context"]["crossdev_load_library"] == ""


def test_a_library_that_cannot_load_is_bad_input_naming_it(bench_module, build_dir, tmp_path):
    missing = tmp_path / "libnot_there.so"
    proc, doc = drive(tmp_path, build_dir, "--load-library", str(missing))
    assert proc.returncode == 2 and doc is None
    assert f"--load-library {missing}: cannot load it" in proc.stderr, proc.stderr


def test_load_library_is_repeatable_and_takes_lists(tmp_path):
    a, b, c = (tmp_path / f"lib{n}.so" for n in "abc")
    args = peer_bench.parse_args(["--load-library", f"{a}:{b}", "--load-library", str(c)])
    assert args.load_library == [str(a), str(b), str(c)]
    assert peer_bench.parse_args([]).load_library == []
    # Relative paths are recorded absolute: the context is read on another machine's report.
    assert peer_bench.library_paths(["x/liby.so"]) == [os.path.abspath("x/liby.so")]


def test_the_slow_kernels_return_the_production_results(slow_library):
    """crossdev::rms_norm, its .out overload and its backward, before and after the library is loaded, in one
    process (so one thread count): the same kernel runs under the slow one, so the results are bit for bit
    the same. calls() proves the slow kernels served the second round (one count per kernel call)."""
    code = textwrap.dedent(f"""\
        import torch
        import crossdev
        crossdev.load()  # crossdev's ops: torch.ops.crossdev.*
        op = torch.ops.crossdev.{OP}

        def results(dtype):
            g = torch.Generator().manual_seed(0)
            x = torch.randn(4, 64, 1024, generator=g).to(dtype)
            w = torch.randn(1024, generator=g).to(dtype)
            out = torch.empty_like(x)
            op.out(x, w, eps=1e-5, out=out)
            xg, wg = x.clone().requires_grad_(True), w.clone().requires_grad_(True)
            y = op(xg, wg, eps=1e-5)
            y.backward(torch.linspace(-1, 1, y.numel()).reshape(y.shape).to(dtype))
            return [op(x, w, eps=1e-5), out, y.detach(), xg.grad, wg.grad]

        dtypes = (torch.float32, torch.bfloat16, torch.float64)
        before = [results(d) for d in dtypes]
        torch.ops.load_library({str(slow_library)!r})
        after = [results(d) for d in dtypes]
        for b, a in zip(before, after):
            for want, got in zip(b, a):
                torch.testing.assert_close(got, want, rtol=0, atol=0)
        print(torch.ops.crossdev_test_slow_kernel_{OP}.calls())
        """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # Per dtype: .out, the recording forward, the backward, the plain forward.
    assert proc.stdout.strip() == str(4 * 3), proc.stdout + proc.stderr[-2000:]
