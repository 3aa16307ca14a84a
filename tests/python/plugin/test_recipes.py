"""docs/ARCHITECTURE.md's "add an op" and "add a preset" recipes, tested.

An op added by one op.cpp that ends with CROSSDEV_REGISTER_OP, and by no other edit, is picked up by
the CLI and its matrices, the pytest plugin, the bench, the report and torch.ops; with
CROSSDEV_RECIPE_OP_BUG=1 its fused kernel drops the last element, and the same paths turn red. A
preset added by one Preset and CROSSDEV_REGISTER_PRESET is usable by redirect rows in the CLI and
the plugin, and listed by the Python module. Both live in the test-only libcrossdev_test_recipes
(tests/recipes/), loaded at run time."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from plugin_runner import ROOT, run_pytest

OP = "recipe_scale_shift"
ROW = "recipe.scale_shift"
MATRIX = textwrap.dedent(f"""\
    suite: ops
    cases:
      - id: {ROW}
        source: "docs/ARCHITECTURE.md: add an op"
        intent: "2 * x + 1 agrees with its golden, its fallback and the CPU"
        op: {OP}
        devices: [cpu]
        dtypes: [float32, bfloat16]
    """)
SHAPE_SETS = {"basic", "empty", "size1", "odd_tail", "strided", "broadcast", "large"}


@pytest.fixture(scope="module")
def recipe_library(built_library):
    return built_library("crossdev_test_recipes")


def matrix_folder(tmp_path, name, text):
    """A folder holding one matrix file, as the CLI and the plugin are pointed at."""
    folder = tmp_path / name.replace(".yaml", "")
    folder.mkdir()
    (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture()
def matrix_dir(tmp_path):
    return matrix_folder(tmp_path, "recipe.yaml", MATRIX)


def run_cli(cli, matrix_dir, out_dir, *args, env=None):
    bundle = out_dir / "bundle.json"
    proc = cli("run", "--quiet", "--matrix", matrix_dir / "recipe.yaml", "--out", bundle, *args, env=env)
    cases = json.loads(bundle.read_text())["cases"] if bundle.exists() else []
    return proc, cases


def test_the_cli_runs_every_case_of_the_new_op(cli, recipe_library, matrix_dir, tmp_path):
    proc, cases = run_cli(cli, matrix_dir, tmp_path, "--load-library", recipe_library)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ids = {c["id"] for c in cases}
    # Every shape set x dtype x impl the op declares, each checked (not skipped) and passing.
    expected = {f"{ROW}/cpu/{dtype}/{shape}/{impl}" for dtype in ("float32", "bfloat16") for shape in SHAPE_SETS
                for impl in ("fused", "fallback", "torchscript")}
    assert ids == expected, sorted(ids ^ expected)[:5]
    assert all(c["status"] == "pass" and c["execution"] == "real" for c in cases)
    fused = next(c for c in cases if c["id"] == f"{ROW}/cpu/float32/odd_tail/fused")
    assert {"golden out", "golden grad.x", "fused_vs_fallback out", "fused_vs_fallback grad.x"} <= set(fused["details"])


def test_a_broken_kernel_of_the_new_op_turns_the_run_red(cli, recipe_library, matrix_dir, tmp_path):
    proc, cases = run_cli(cli, matrix_dir, tmp_path, "--load-library", recipe_library,
                          env={"CROSSDEV_RECIPE_OP_BUG": "1"})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    failed = {c["id"] for c in cases if c["status"] == "fail"}
    # The fused kernel misses the last element of every non-empty input; nothing else is wrong.
    assert failed == {f"{ROW}/cpu/{dtype}/{shape}/fused" for dtype in ("float32", "bfloat16")
                      for shape in SHAPE_SETS - {"empty"}}, sorted(failed)


def test_without_the_library_the_row_is_bad_input_naming_the_op(cli, matrix_dir, tmp_path):
    proc, _ = run_cli(cli, matrix_dir, tmp_path)
    assert proc.returncode == 2
    assert "recipe.yaml:6: " in proc.stderr and f"unknown op '{OP}'" in proc.stderr, proc.stderr


def test_the_report_shows_the_new_op(cli, recipe_library, matrix_dir, tmp_path):
    proc, _ = run_cli(cli, matrix_dir, tmp_path, "--load-library", recipe_library, env={"CROSSDEV_RECIPE_OP_BUG": "1"})
    assert proc.returncode == 1
    report = tmp_path / "report"
    render = subprocess.run([sys.executable, "-m", "crossdev", "report", tmp_path / "bundle.json", "--out", report],
                            capture_output=True, text=True, timeout=300)
    assert render.returncode == 0, render.stderr
    html = (report / "index.html").read_text()
    assert f"{ROW}/cpu/float32/odd_tail/fused" in html
    summary = (report / "summary.md").read_text().replace("\\_", "_")
    assert any(f"{ROW}/cpu/float32/odd_tail/fused" in line and "| fail |" in line for line in summary.splitlines())


def test_the_pytest_plugin_collects_and_runs_the_new_op(recipe_library, matrix_dir):
    matrix = matrix_dir / "recipe.yaml"  # a YAML file named on the command line is a matrix
    result = run_pytest(matrix, "--crossdev-load-library", recipe_library, "--crossdev-device", "cpu", "-q",
                        "-k", "odd_tail")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "6 passed" in result.stdout, result.stdout[-2000:]
    red = run_pytest(matrix, "--crossdev-load-library", recipe_library, "--crossdev-device", "cpu", "-q",
                     "-k", "odd_tail", env={"CROSSDEV_RECIPE_OP_BUG": "1"})
    assert red.returncode == 1 and "2 failed, 4 passed" in red.stdout, red.stdout[-2000:]


def test_the_bench_times_the_new_op(build_dir, recipe_library, tmp_path):
    exe = build_dir / "bin" / "crossdev_bench"
    if not exe.exists():
        pytest.skip(f"{exe} not built (CROSSDEV_BUILD_BENCH=OFF)")
    matrix = tmp_path / "bench.yaml"
    matrix.write_text("suite: bench\ncases:\n"
                      f"  - {{id: op.recipe, source: s, kind: op, op: {OP}, sizes: [64K], impls: [fused, fallback],"
                      " passes: [fwd, fwd_bwd], devices: [cpu]}\n", encoding="utf-8")
    out = tmp_path / "bench.json"
    proc = subprocess.run([exe, f"--crossdev_matrix={matrix}", f"--crossdev_load_library={recipe_library}",
                           "--benchmark_min_time=0.001", f"--benchmark_out={out}", "--benchmark_out_format=json"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    runs = {b["name"]: b for b in json.loads(out.read_text())["benchmarks"]}
    assert set(runs) == {f"{OP}/{impl}/float32/64K/cpu/{p}/real_time" for impl in ("fused", "fallback")
                         for p in ("fwd", "fwd_bwd")}
    fwd = runs[f"{OP}/fused/float32/64K/cpu/fwd/real_time"]
    assert not fwd.get("error_occurred") and fwd["bytes_per_second"] > 0
    # The traffic model knows it too: one read of x and one write of y, 4 bytes an element.
    assert fwd["bytes_per_call"] == 2 * 4 * 65536 and fwd["elements"] == 65536
    # Without the library the row names an op the bench does not know: bad input.
    bad = subprocess.run([exe, f"--crossdev_matrix={matrix}", "--benchmark_list_tests=true"],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert bad.returncode == 2 and f"unknown op '{OP}'" in bad.stderr, bad.stderr


def test_torch_ops_has_the_new_op_with_autograd(recipe_library):
    code = textwrap.dedent(f"""\
        import torch
        torch.ops.load_library({str(recipe_library)!r})
        x = torch.randn(3, 67, requires_grad=True)
        y = torch.ops.crossdev.{OP}(x)
        torch.testing.assert_close(y, 2 * x + 1)
        y.sum().backward()
        torch.testing.assert_close(x.grad, torch.full_like(x, 2.0))
        assert torch.ops.crossdev.{OP}(x.detach().to("meta")).shape == x.shape
        print("ok")
        """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-3000:]


PRESET = "recipe-xpu-first"
PRESET_MATRIX = textwrap.dedent(f"""\
    suite: redirect
    cases:
      - {{id: recipe.preset.all, source: "docs/ARCHITECTURE.md: add a preset", intent: "XPU wins over everything",
         policy: {PRESET}, host: all, request: ~, expect: "xpu:0", action: default_injected}}
      - {{id: recipe.preset.cuda-and-mps, source: "docs/ARCHITECTURE.md: add a preset", intent: "then CUDA, before MPS",
         policy: {PRESET}, host: cuda+mps, request: ~, expect: "cuda:0", action: default_injected}}
      - {{id: recipe.preset.explicit-mps, source: "docs/ARCHITECTURE.md: add a preset",
         intent: "an explicit device is honoured, never rewritten", policy: {PRESET}, host: all, request: mps,
         expect: "mps:0", action: honored}}
    """)


@pytest.fixture()
def preset_matrix_dir(tmp_path):
    return matrix_folder(tmp_path, "recipe_preset.yaml", PRESET_MATRIX)


def test_a_registered_preset_drives_redirect_rows_in_the_cli(cli, recipe_library, preset_matrix_dir, tmp_path):
    bundle = tmp_path / "preset.json"
    proc = cli("run", "--quiet", "--matrix", preset_matrix_dir / "recipe_preset.yaml", "--out", bundle,
               "--load-library", recipe_library)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cases = json.loads(bundle.read_text())["cases"]
    assert {c["id"] for c in cases} == {"recipe.preset.all", "recipe.preset.cuda-and-mps", "recipe.preset.explicit-mps"}
    assert all(c["status"] == "pass" for c in cases), [c for c in cases if c["status"] != "pass"]
    # Without the library the preset does not exist: bad input, naming the row's line and the presets.
    bad = cli("run", "--quiet", "--matrix", preset_matrix_dir / "recipe_preset.yaml", "--out", tmp_path / "bad.json")
    assert bad.returncode == 2
    assert f"unknown policy preset '{PRESET}'; expected one of torchdevice" in bad.stderr, bad.stderr
    assert "recipe_preset.yaml:4: " in bad.stderr, bad.stderr


def test_a_refused_preset_fails_the_load_with_its_reason(cli, recipe_library, preset_matrix_dir, tmp_path):
    proc = cli("run", "--quiet", "--matrix", preset_matrix_dir / "recipe_preset.yaml", "--out", tmp_path / "b.json",
               "--load-library", recipe_library, env={"CROSSDEV_RECIPE_PRESET_BUG": "1"})
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "--load-library: '" in proc.stderr and "register_preset('torchdevice'): a preset of that name exists" in proc.stderr, \
        proc.stderr


def test_the_pytest_plugin_runs_rows_of_a_registered_preset(recipe_library, preset_matrix_dir):
    result = run_pytest(preset_matrix_dir / "recipe_preset.yaml", "--crossdev-load-library", recipe_library, "-q")
    assert result.returncode == 0 and "3 passed" in result.stdout, result.stdout[-2000:] + result.stderr[-2000:]


def test_the_python_module_lists_a_registered_preset(build_dir, recipe_library):
    code = textwrap.dedent(f"""\
        import ctypes, crossdev
        before = [p["name"] for p in crossdev.presets()]
        ctypes.CDLL({str(recipe_library)!r}, mode=ctypes.RTLD_GLOBAL)
        presets = {{p["name"]: p for p in crossdev.presets()}}
        assert {PRESET!r} not in before and list(presets)[:len(before)] == before, (before, list(presets))
        assert presets[{PRESET!r}]["order"] == ["xpu", "cuda", "mps"], presets[{PRESET!r}]
        print("ok")
        """)
    env = dict(os.environ, PYTHONPATH=str(build_dir / "python"))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stdout + proc.stderr[-3000:]
