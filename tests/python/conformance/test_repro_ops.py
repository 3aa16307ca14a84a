"""`crossdev repro` of an ops case (issue 51, docs/repro.md "An ops case"): crossdev's own operators, one of their
implementations on one device, dtype and shape set, against the float64 golden and the fallback.

The engine records the case's exact inputs with their strides and its grad_out (conformance/parity/
ops_repro_sample.h); the script (crossdev/repro_ops.py) needs torch and crossdev's op library only. Proved with the
test-only mutants of tests/mutants, which replace a CPU kernel of a crossdev op (CROSSDEV_MUTANT=<name> activates
one when the library loads):
- in `python3 -I` with the crossdev package unimportable, the script loads the op library by path and exits 0;
- with the mutant loaded it exits 1, naming the comparison and the worst element; loaded but not active, exit 0;
- `rotary.ignore_stride` breaks only non-contiguous inputs: its script reproduces it, so the recorded layout is
  the one the kernel saw; `rms_norm.backward_no_rsqrt_term` breaks only the gradient: the recorded grad_out is used;
- a case whose inputs are too large to record inline, and a case that passed, give exit 2 with the reason.
"""
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT

ROTARY_STRIDED = "ops.rotary/cpu/float32/strided/fused"
RMS_NORM_BASIC = "ops.rms_norm/cpu/float32/basic/fused"
# the op library and the mutants loaded, then the generated script as __main__; the crossdev package unimportable
LAUNCHER = """import runpy, sys
sys.modules["crossdev"] = None
import torch
script, *libraries = sys.argv[1:]
for lib in libraries:
    torch.ops.load_library(lib)
sys.argv = [script]
runpy.run_path(script, run_name="__main__")
"""
ISOLATED = """import runpy, sys
sys.modules["crossdev"] = None
script = sys.argv[1]
sys.argv = [script]
runpy.run_path(script, run_name="__main__")
"""


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CROSSDEV_MUTANT")}
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def mutated(cli, tmp_path_factory, built_library):
    """{mutant: (bundle, cases)} for the two mutants, each over its op's rows."""
    tmp = tmp_path_factory.mktemp("repro_ops")
    library = built_library("crossdev_mutants")
    out = {}
    for mutant, rows in (("rotary.ignore_stride", "ops.rotary*"), ("rms_norm.backward_no_rsqrt_term", "ops.rms_norm*")):
        bundle = tmp / f"{mutant}.json"
        proc = cli("run", "--filter", rows, "--quiet", "--load-library", library, "--out", bundle,
                   env={"CROSSDEV_MUTANT": mutant})
        assert proc.returncode == 1, proc.stdout + proc.stderr
        out[mutant] = (bundle, {c["id"]: c for c in json.loads(bundle.read_text())["cases"]})
    return tmp, library, out


def _script(cli, bundle, case_id, folder):
    proc = cli("repro", bundle, case_id, "--out", folder)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return folder / "repro.py"


def _op_library():
    import crossdev.repro_ops
    return crossdev.repro_ops.op_library_paths()


@pytest.mark.parametrize("mutant, case_id, broken", [("rotary.ignore_stride", ROTARY_STRIDED, "out"),
                                                      ("rms_norm.backward_no_rsqrt_term", RMS_NORM_BASIC, "grad.x")])
def test_the_script_fails_with_the_mutant_and_passes_without_it(mutated, cli, mutant, case_id, broken):
    tmp, library, runs = mutated
    bundle, cases = runs[mutant]
    assert cases[case_id]["status"] == "fail" and "repro_sample" in cases[case_id]["details"], cases[case_id]
    script = _script(cli, bundle, case_id, tmp / case_id.replace("/", "_"))
    alone = subprocess.run([sys.executable, "-I", "-c", ISOLATED, str(script)], capture_output=True, text=True,
                           cwd=script.parent, env=_env(), timeout=300)
    assert alone.returncode == 0 and alone.stdout.startswith("OK:"), alone.stdout + alone.stderr[-2000:]
    launch = [sys.executable, "-c", LAUNCHER, str(script), *_op_library(), str(library)]
    bad = subprocess.run(launch, capture_output=True, text=True, env=_env(CROSSDEV_MUTANT=mutant), timeout=300)
    assert bad.returncode == 1, bad.stdout + bad.stderr[-2000:]
    assert f"golden {broken} differs on cpu" in bad.stdout and "worst element" in bad.stdout, bad.stdout[-3000:]
    inert = subprocess.run(launch, capture_output=True, text=True, env=_env(), timeout=300)
    assert inert.returncode == 0, inert.stdout + inert.stderr[-2000:]


def test_cases_without_a_script_exit_2_with_the_reason(mutated, cli):
    tmp, _, runs = mutated
    bundle, cases = runs["rms_norm.backward_no_rsqrt_term"]
    large = "ops.rms_norm/cpu/float32/large/fused"
    assert cases[large]["status"] == "fail" and "repro_sample" not in cases[large]["details"]
    proc = cli("repro", bundle, large, "--out", tmp / "large")
    assert proc.returncode == 2 and "more than the 65536 a bundle records inline" in proc.stderr, proc.stderr
    assert not (tmp / "large" / "repro.py").exists()
    passed = "ops.rms_norm/cpu/float32/basic/fallback"
    assert cases[passed]["status"] == "pass"
    proc = cli("repro", bundle, passed, "--out", tmp / "passed")
    assert proc.returncode == 2 and "it passed: there is nothing to reproduce" in proc.stderr, proc.stderr
