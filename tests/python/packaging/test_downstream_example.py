"""The downstream example (examples/downstream, issue 14): a user's repository with its own
CMake build of a C++ op extension, a Python custom op, a get_device() and a matrix of candidate
rows. `make test` builds it against the same LibTorch as crossdev (into <build>/examples/downstream,
incremental, ccache when crossdev's build uses it) and checks both directions: green with
mylib's kernels as written, and with MYLIB_BUG=1 (a tail-loop bug in mylib::fused_modulate)
`crossdev run` exits 1 and the bundle, the JUnit file and the rendered report name exactly the
failing cases with their mismatch."""
import json
import os
import pathlib
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "downstream"
# Everything the main build was configured with that the example's build must share.
SHARED_CACHE_ENTRIES = ("Torch_DIR", "CMAKE_CXX_COMPILER", "CMAKE_CXX_COMPILER_LAUNCHER", "CMAKE_MAKE_PROGRAM")


def cache_entries(build_dir):
    entries = {}
    for line in (build_dir / "CMakeCache.txt").read_text().splitlines():
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*):[A-Z]+=(.*)$", line)
        if m and m.group(1) in SHARED_CACHE_ENTRIES + ("CMAKE_GENERATOR",) and m.group(2):
            entries[m.group(1)] = m.group(2)
    return entries


def crossdev_cmake_prefix():
    """The installed crossdev's CMake package folder (crossdev.cmake_prefix_path), as a user gets it."""
    proc = subprocess.run([sys.executable, "-c", "import crossdev; print(crossdev.cmake_prefix_path)"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    prefix = pathlib.Path(proc.stdout.strip())
    assert (prefix / "crossdev" / "crossdevConfig.cmake").is_file(), f"no CMake package under {prefix}"
    return prefix


@pytest.fixture(scope="module")
def example_build(build_dir):
    """Configures and builds the example the way docs/ops.md says ("Check your own kernels: examples/downstream/"):
    crossdev's LibTorch, and the installed crossdev through find_package(crossdev)."""
    cache = cache_entries(build_dir)
    out = build_dir / "examples" / "downstream"
    prefix = crossdev_cmake_prefix()
    configure = ["cmake", "-S", EXAMPLE, "-B", out, "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_PREFIX_PATH={prefix}"]
    if "CMAKE_GENERATOR" in cache:
        configure += ["-G", cache["CMAKE_GENERATOR"]]
    configure += [f"-D{k}={cache[k]}" for k in SHARED_CACHE_ENTRIES if k in cache]
    start = time.monotonic()
    cached = (out / "CMakeCache.txt").read_text() if (out / "CMakeCache.txt").exists() else ""
    configured = f"crossdev_DIR:PATH={prefix / 'crossdev'}" in cached
    for command in ([] if configured else [configure]) + [["cmake", "--build", out]]:
        proc = subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=1200)
        assert proc.returncode == 0, f"{' '.join(map(str, command))}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    print(f"examples/downstream built in {time.monotonic() - start:.1f} s")
    assert (out / "libmylib_ops.so").exists() and (out / "libmylib_preset.so").exists()
    return out


@pytest.fixture(scope="module")
def example_library(example_build):
    return example_build / "libmylib_ops.so"


def test_the_preset_built_with_find_package_crossdev_drives_redirect_rows(cli, example_build, tmp_path):
    """libmylib_preset.so links crossdev::core from the installed package (no crossdev source or
    build tree in its build) and registers mylib-xpu-first; its rows pass only when it is loaded."""
    cache = (example_build / "CMakeCache.txt").read_text()
    crossdev_dir = re.search(r"^crossdev_DIR:PATH=(.*)$", cache, re.M).group(1)
    assert "site-packages" in crossdev_dir and crossdev_dir.endswith("crossdev/share/cmake/crossdev"), crossdev_dir
    out = tmp_path / "bundle.json"
    proc = cli("run", "--load-library", example_build / "libmylib_preset.so", "--matrix", EXAMPLE / "matrices" / "presets",
               "--quiet", "--out", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cases = json.loads(out.read_text())["cases"]
    assert {c["id"]: c["status"] for c in cases} == {
        "mylib.preset.xpu-and-cuda": "pass", "mylib.preset.cuda": "pass", "mylib.preset.explicit": "pass"}
    without = cli("run", "--matrix", EXAMPLE / "matrices" / "presets", "--quiet", "--out", tmp_path / "no.json")
    assert without.returncode == 2 and "mylib-xpu-first" in without.stderr, without.stderr


def run_example(cli, library, tmp_path, bug):
    out, junit = tmp_path / "bundle.json", tmp_path / "junit.xml"
    proc = cli("run", "--load-library", library, "--matrix", EXAMPLE / "matrices", "--quiet", "--out", out,
               "--junit", junit, env={"MYLIB_BUG": "1" if bug else "0"})
    return proc, json.loads(out.read_text()), ET.parse(junit).getroot()


def test_the_example_passes_with_its_kernels_as_written(cli, example_library, tmp_path):
    proc, bundle, _ = run_example(cli, example_library, tmp_path, bug=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ran = [c for c in bundle["cases"] if c["execution"] == "real"]
    assert {c["id"].split("/")[0] for c in ran} == {"mylib.modulate", "mylib.rms_norm"}
    assert all(c["status"] == "pass" for c in ran)
    # Every dtype and shape set of the reference ops, gradients included.
    assert len(ran) == 4 * 7 + 4 * 8
    assert all("golden grad.x" in c["details"] for c in ran if c["details"]["shape_set"] != "empty")


def test_the_bug_is_caught_with_the_failing_cases_and_their_mismatch(cli, example_library, tmp_path):
    proc, bundle, junit = run_example(cli, example_library, tmp_path, bug=True)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    failed = {c["id"]: c for c in bundle["cases"] if c["status"] == "fail"}
    # The tail loop runs only where D is not a multiple of 8: odd_tail (D=67) and size1 (D=1).
    assert set(failed) == {f"mylib.modulate/cpu/{dtype}/{shape_set}/candidate"
                           for dtype in ("float32", "float16", "bfloat16", "float64")
                           for shape_set in ("odd_tail", "size1")}
    for case in failed.values():
        assert "Mismatched elements" in case["message"] and "max_abs=" in case["message"], case["message"]
        assert case["details"]["first_mismatch"].startswith("golden out [")
        assert case["details"]["candidate"] == "mylib::fused_modulate"
    junit_failures = {tc.get("name") for tc in junit.iter("testcase") if tc.find("failure") is not None}
    assert junit_failures == set(failed)
    # The rendered report lists them too.
    report = tmp_path / "report"
    render = subprocess.run([sys.executable, "-m", "crossdev", "report", tmp_path / "bundle.json", "--out", report],
                            capture_output=True, text=True, timeout=300)
    assert render.returncode == 0, render.stderr
    summary = (report / "summary.md").read_text().replace("\\_", "_")  # Markdown escapes underscores
    gating = [line for line in summary.splitlines() if "/candidate | fail |" in line]
    assert {case_id for case_id in failed if any(case_id in line for line in gating)} == set(failed), summary[-3000:]
    assert all("Mismatched elements" in line and "max_abs=" in line for line in gating), gating


@pytest.mark.parametrize("bug", [False, True], ids=["bug_off", "bug_on"])
def test_the_examples_own_pytest(build_dir, example_library, bug):
    """mylib's CI: its ops through torch.ops and crossdev.run_matrix (the Python custom op
    included), opcheck, and get_device() against the cuda-first preset on this host."""
    env = dict(os.environ, MYLIB_LIBRARY=str(example_library), MYLIB_BUG="1" if bug else "0")
    # With the bug on, only the test that must turn red: the others do not depend on it.
    select = ["-k", "test_cpp_ops_pass_crossdev"] if bug else []
    proc = subprocess.run([sys.executable, "-m", "pytest", EXAMPLE / "tests", "-q", "-p", "no:cacheprovider", *select],
                          capture_output=True, text=True, env=env, cwd=EXAMPLE, timeout=900)
    if not bug:
        assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
        assert "6 passed" in proc.stdout and "skipped" not in proc.stdout, proc.stdout[-3000:]  # nothing vacuous
    else:
        assert proc.returncode == 1, proc.stdout[-6000:] + proc.stderr[-3000:]
        assert "1 failed" in proc.stdout and "FAILED tests/test_mylib.py::test_cpp_ops_pass_crossdev" in proc.stdout, proc.stdout[-6000:]
        assert "mylib.modulate/cpu/float32/odd_tail/candidate [fail]" in proc.stdout, proc.stdout[-6000:]
