"""Proof that the gradient localisation names the culprit (docs/models.md): a test-only sim kernel
(tests/model_faults/) makes only aten::gelu_backward off by a relative 1e-3; the outputs
agree, the gradients do not, and the tiny DiT block's first_divergence names the MLP's activation
module and aten::gelu_backward in the backward. It runs in a child process (`python -m
crossdev.models --load-library ...`): a kernel cannot be unloaded. The forward mutant's proof runs
through the engine: test_models_suite.py."""
import json
import os
import subprocess
import sys

import pytest

from conftest import BUILD_DIR, INSTALLED, ROOT, requires_sim

pytestmark = requires_sim

EXAMPLES = ROOT / "examples" / "models"
DIT = "crossdev_examples.dit:tiny_dit_block"


def compare_in_child(factory, *extra):
    env = dict(os.environ)
    if not INSTALLED:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BUILD_DIR / "python"), env.get("PYTHONPATH")]))
    proc = subprocess.run([sys.executable, "-m", "crossdev.models", factory, "--device", "sim", "--json",
                           "--import-path", str(EXAMPLES), *map(str, extra)],
                          capture_output=True, text=True, env=env, timeout=300)
    results = json.loads(proc.stdout)["results"] if proc.stdout.startswith("{") else []
    return proc, results


@pytest.fixture(scope="module")
def gelu_backward_mutant(built_library):
    return compare_in_child(DIT, "--load-library", built_library("crossdev_test_model_fault_gelu_backward"))


def test_a_wrong_gelu_backward_is_named_by_the_gradient_localisation(gelu_backward_mutant):
    proc, (on_sim,) = gelu_backward_mutant
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert on_sim["checks"]["forward"]["passed"], "the forward kernel is the sim backend's own"
    assert not on_sim["checks"]["backward"]["passed"]
    assert on_sim["first_divergence"] == {**on_sim["first_divergence"], "phase": "backward", "module": "mlp.act",
                                          "op": "aten::gelu_backward"}


GPT2 = "crossdev_examples.transformers_models:tiny_gpt2"


def test_a_wrong_gelu_backward_inside_transformers_gpt2_is_named_through_its_cache(built_library):
    """GPT-2's blocks get its key/value Cache as a keyword: localisation replays each block on deep copies
    of what it got (placement.snapshot), not on the cache the golden's backward already freed."""
    pytest.importorskip("transformers")
    proc, (on_sim,) = compare_in_child(GPT2, "--load-library", built_library("crossdev_test_model_fault_gelu_backward"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert not on_sim["localisation_error"], on_sim["localisation_error"]
    divergence = on_sim["first_divergence"]
    assert divergence["phase"] == "backward" and divergence["op"] == "aten::gelu_backward", on_sim["message"]
    assert divergence["module"] in ("transformer.h.0.mlp.act", "transformer.h.1.mlp.act"), divergence


def test_the_command_exits_2_naming_a_factory_that_does_not_import(crossdev_module, capsys):
    from crossdev.models.__main__ import main
    assert main(["no_such_package_xyz:build", "--device", "sim"]) == 2
    err = capsys.readouterr().err
    assert "model factory 'no_such_package_xyz:build': cannot import module" in err and "ModuleNotFoundError" in err, err
