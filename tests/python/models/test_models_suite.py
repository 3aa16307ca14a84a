"""`suite: models` rows through the engine (`crossdev run`) and its Python worker (docs/models.md,
"Matrix rows"). The proof that it can fail: --load-library puts a test-only aten::gelu off by a
relative 1e-3 on sim (tests/model_faults/) into the worker, and the DiT block's case names
the MLP's activation module and aten::gelu, not an earlier layer and not a parent, although every
later layer and every enclosing module differs too. A factory that does not import is exit 2
naming the row's file:line and the Python error."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import BUILD_DIR, INSTALLED, ROOT, requires_sim
from plugin_runner import run_pytest

pytestmark = requires_sim  # sim is kept out of a process with a real accelerator

EXAMPLES = ROOT / "examples" / "models"
# The worker's path without the examples (the fixture's own PYTHONPATH entry kept: build tree runs):
# the factories' package comes from `--import EXAMPLES`.
ENV = {"PYTHONPATH": os.pathsep.join(filter(None, [None if INSTALLED else str(BUILD_DIR / "python"),
                                                   os.environ.get("PYTHONPATH")]))}


def write_matrix(tmp_path, model):
    path = tmp_path / "models_t.yaml"
    path.write_text(textwrap.dedent(f"""\
        suite: models
        cases:
          - {{id: t.dit, source: "issue 25", intent: "test", model: "{model}", devices: [mps, xpu], dtypes: [float32]}}
        """))
    return path


def depth_table(text):
    """DeviceResult.depth_table()'s lines -> {module: {phase, inherited, own, verdict}}."""
    rows = {}
    for line in text.splitlines()[1:]:
        module, phase, inherited, own, verdict = line.split(None, 4)
        rows[module] = {"phase": phase, "inherited": float(inherited), "own": float(own), "verdict": verdict.strip()}
    return rows


def run(cli, tmp_path, matrix, *extra):
    bundle, junit = tmp_path / "b.json", tmp_path / "j.xml"
    proc = cli("run", "--matrix", matrix, "--simulate", "mps", "--out", bundle, "--junit", junit, *extra, env=ENV)
    cases = json.loads(bundle.read_text())["cases"] if bundle.exists() else []
    return proc, {c["id"]: c for c in cases}, junit


def test_a_wrong_gelu_on_the_device_fails_the_row_naming_the_culprit_in_the_bundle(cli, tmp_path, built_library):
    matrix = write_matrix(tmp_path, "crossdev_examples.dit:tiny_dit_block")
    mutant = built_library("crossdev_test_model_fault_gelu_forward")
    proc, cases, junit = run(cli, tmp_path, matrix, "--load-library", mutant, "--import", EXAMPLES)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    case = cases["t.dit/mps/float32"]
    assert case["status"] == "fail" and case["execution"] == "simulated" and case["device"] == "sim:0", case
    assert case["suite"] == "models" and case["row_id"] == "t.dit" and case["file"].endswith("models_t.yaml")
    assert case["details"]["first_divergence"] == "mlp.act" and case["details"]["first_divergence_op"] == "aten::gelu"
    assert "first divergence: mlp.act at aten::gelu (forward)" in case["message"]
    # Not an earlier layer, not a parent: every later layer and every enclosing module differs too.
    layers = depth_table(case["details"]["error_along_depth"])
    for later in ("mlp.fc2", "mlp_residual"):  # the symptom downstream: inherited, not their own
        assert layers[later]["inherited"] > 1e-4 and layers[later]["verdict"] == "ok", layers[later]
    for parent in ("mlp", "(model)"):  # enclosing modules fail with it, yet are not named
        assert layers[parent]["verdict"] == "OUT OF TOLERANCE", layers[parent]
    earlier = [p for p in layers if p not in ("(model)", "mlp", "mlp.act", "mlp.fc2", "mlp_residual")]
    assert len(earlier) >= 10 and all(layers[p]["verdict"] == "ok" for p in earlier), layers
    assert case["metrics"]["forward_failing"] == 1 and case["metrics"]["backward_compared"] == 10
    # The same along the depth as the case's structured `data`, through the engine's record (the report draws it).
    forward = {p["module"]: p for p in case["data"]["layers"] if p["phase"] == "forward"}
    assert forward["mlp.fc2"]["inherited_passed"] is False and forward["mlp.fc2"]["own_passed"] is True
    assert forward["mlp.act"]["own_passed"] is False and forward["mlp.act"]["call"] == case["data"]["first_divergence_call"]
    absent = cases["t.dit/xpu/float32"]
    assert absent["status"] == "skip" and "--simulate xpu" in absent["message"] and "data" not in absent
    assert "t.dit/mps/float32" in junit.read_text()


def test_a_factory_that_does_not_import_exits_2_naming_file_line_and_the_python_error(cli, tmp_path):
    matrix = write_matrix(tmp_path, "no_such_package_xyz.models:build")
    proc, cases, _ = run(cli, tmp_path, matrix, "--import", EXAMPLES)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{matrix}:3:" in proc.stderr, proc.stderr
    assert "cannot import module 'no_such_package_xyz.models': ModuleNotFoundError" in proc.stderr, proc.stderr
    assert not cases, "nothing ran"


def test_a_missing_import_directory_and_an_unknown_seed_policy_are_exit_2_naming_them(cli, tmp_path):
    matrix = write_matrix(tmp_path, "crossdev_examples.dit:tiny_dit_block")
    proc, cases, _ = run(cli, tmp_path, matrix, "--import", tmp_path / "no_such_dir")
    assert proc.returncode == 2 and not cases, proc.stdout + proc.stderr
    assert f"--import: '{tmp_path / 'no_such_dir'}' is not a directory" in proc.stderr, proc.stderr
    matrix.write_text(matrix.read_text().replace("dtypes: [float32]", "dtypes: [float32], seed_policy: sometimes"))
    proc, cases, _ = run(cli, tmp_path, matrix, "--import", EXAMPLES)
    assert proc.returncode == 2 and not cases, proc.stdout + proc.stderr
    assert f"{matrix}:3:" in proc.stderr and "unknown seed policy 'sometimes'; expected one of none, same_mask" \
        in proc.stderr, proc.stderr


# A factory of the user's own, in a directory only --crossdev-import names: a dropout in train mode
# (seed_policy same_mask replays the CPU's masks) and a bicubic upsampling, which the mps-like
# profile refuses as MPS does (recover: true runs that op on the CPU and records the rerun).
TINY_FACTORY = """\
import torch
from torch import nn


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x):
        up = nn.functional.interpolate(x, scale_factor=2, mode="bicubic").flatten(2)[..., :8]
        return nn.functional.dropout(self.linear(up), 0.25, self.training)


def tiny():
    torch.manual_seed(0)
    return Tiny().train(), (torch.randn(1, 2, 4, 4),)
"""


def test_the_pytest_plugin_collects_and_runs_models_rows_finding_the_factory_through_crossdev_import(tmp_path):
    factories = tmp_path / "factories"
    factories.mkdir()
    (factories / "tinymodels.py").write_text(TINY_FACTORY)
    matrix = tmp_path / "models_tiny.yaml"
    matrix.write_text(textwrap.dedent("""\
        suite: models
        cases:
          - {id: t.tiny, source: "issue 25", intent: "plugin", model: "tinymodels:tiny", devices: [mps, xpu],
             dtypes: [float32], seed_policy: same_mask, recover: true}
        """))
    bundle = tmp_path / "bundle.json"
    r = run_pytest(matrix, "-v", "--crossdev-simulate", "mps", "--crossdev-import", factories,
                   "--crossdev-bundle", bundle, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "models_tiny.yaml::t.tiny/mps/float32 PASSED" in r.stdout, r.stdout
    assert "models_tiny.yaml::t.tiny/xpu/float32 SKIPPED" in r.stdout, r.stdout
    cases = {c["id"]: c for c in json.loads(bundle.read_text())["cases"]}
    details = cases["t.tiny/mps/float32"]["details"]
    assert details["error_category"] == "unsupported_op" and details["rerun_status"] == "pass", details
    assert details["recovery_applied"] == "move_to_cpu for aten::upsample_bicubic2d (1 calls)", details
    missing = run_pytest(matrix, "--collect-only", "-q", "--crossdev-import", tmp_path / "nowhere", cwd=tmp_path)
    assert missing.returncode == 4 and "--crossdev-import: '" in missing.stderr and "nowhere' is not a directory" \
        in missing.stderr, missing.stdout + missing.stderr


def write_expectations(tmp_path, *entries):
    folder = tmp_path / "expectations" / "models"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "mps.yaml"
    path.write_text("description: test\nexpectations:\n" + "".join(f"  - {e}\n" for e in entries))
    return path


def test_an_xfail_entry_expects_a_devices_genuine_difference_and_goes_stale_when_it_passes(cli, tmp_path, built_library):
    """<matrix folder>/expectations/models/<kind>.yaml (docs/models.md): the broken gelu's fail becomes xfail;
    the same entry on a clean run is xpass, which gates; a skip entry is bad input naming its file:line."""
    matrix = write_matrix(tmp_path, "crossdev_examples.dit:tiny_dit_block")
    entries = write_expectations(tmp_path, '{match: "t.dit/mps/*", status: xfail, reason: "gelu is off on purpose", '
                                           'execution: simulated}',
                                 '{match: "t.gone/mps/*", status: xfail, reason: "a row that was removed"}')
    mutant = built_library("crossdev_test_model_fault_gelu_forward")
    proc, cases, _ = run(cli, tmp_path, matrix, "--load-library", mutant, "--import", EXAMPLES)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    case = cases["t.dit/mps/float32"]
    assert case["status"] == "xfail" and "gelu is off on purpose" in case["message"], case
    # An entry that matches no case of a run that ran every models row of its folder is stale (suite_expectations.h)
    stale = json.loads((tmp_path / "b.json").read_text())["stale_expectations"]
    assert [(e["where"], e["match"]) for e in stale] == [(f"{entries}:4", "t.gone/mps/*")], stale
    assert f"{entries}:4: stale expectation 't.gone/mps/*' (xfail, kind mps) matches no case of this run, which ran " \
        "every models row of its folder" in proc.stdout, proc.stdout
    # `crossdev expectations accept` knows the models suite (its record allows expectations): the stale entry goes
    accepted = cli("expectations", "accept", tmp_path / "b.json", env={"CI": ""})
    assert accepted.returncode == 0 and "0 added, 0 removed (now pass), 1 removed (stale), 1 kept" in accepted.stdout, \
        accepted.stdout + accepted.stderr
    assert "t.gone" not in entries.read_text() and "gelu is off on purpose" in entries.read_text()

    proc, cases, _ = run(cli, tmp_path, matrix, "--import", EXAMPLES)
    assert proc.returncode == 1 and cases["t.dit/mps/float32"]["status"] == "xpass", proc.stdout + proc.stderr

    # An entry's class expects that failure only: the same wrong result under an entry for a crash gates.
    write_expectations(tmp_path, '{match: "t.dit/mps/*", status: xfail, reason: "it crashes", class: crash}')
    proc, cases, _ = run(cli, tmp_path, matrix, "--load-library", mutant, "--import", EXAMPLES)
    case = cases["t.dit/mps/float32"]
    assert proc.returncode == 1 and case["status"] == "fail", proc.stdout + proc.stderr
    assert case["message"].startswith("not the expected failure: ") and "expects a crash failure (it crashes), " \
        "the case is fail: " in case["message"], case["message"]
    # accepted, the new failure is an entry of its own class, with the execution it was seen under
    entries.unlink()
    accepted = cli("expectations", "accept", tmp_path / "b.json", env={"CI": ""})
    assert accepted.returncode == 0 and "1 added" in accepted.stdout, accepted.stdout + accepted.stderr
    import yaml
    added = yaml.safe_load(entries.read_text())["expectations"]
    assert [(e["match"], e["status"], e["class"], e["execution"]) for e in added] == \
        [("t.dit/mps/float32", "xfail", "numerics", "simulated")], added

    bad = write_expectations(tmp_path, '{match: "t.dit/mps/*", status: skip, reason: "no"}')
    proc, _, _ = run(cli, tmp_path, matrix, "--import", EXAMPLES)
    assert proc.returncode == 2 and f"{bad}:3: a models expectation is xfail" in proc.stderr, proc.stderr


def test_one_python_worker_serves_every_row_and_a_crash_costs_only_its_case(cli, tmp_path):
    """runner/python_rows.h: the rows of a process share one waiting worker (torch and a device's runtime
    start once), and a worker that dies inside a case makes that case a crash; the next case and the
    next row run in a new worker. The factories write the worker's pid; `pid_model:crashing` kills its
    worker when it runs on the device (not in the check's worker, not on the CPU golden)."""
    package = tmp_path / "pkg"
    package.mkdir()
    pids = tmp_path / "pids.txt"
    (package / "pid_model.py").write_text(textwrap.dedent(f"""\
        import os, signal, torch

        def _record(name):
            with open({str(pids)!r}, "a") as f:
                f.write(f"{{name}} {{os.getpid()}}\\n")

        class Crashing(torch.nn.Linear):
            def forward(self, x):
                if x.device.type != "cpu":
                    os.kill(os.getpid(), signal.SIGKILL)
                return super().forward(x)

        def plain(name="plain"):
            _record(name)
            return torch.nn.Linear(4, 3), (torch.randn(2, 4),)

        def second():
            return plain("second")

        def crashing():
            _record("crashing")
            return Crashing(4, 3), (torch.randn(2, 4),)
        """))
    matrix = tmp_path / "models_w.yaml"
    matrix.write_text(textwrap.dedent("""\
        suite: models
        cases:
          - {id: w.a, source: test, intent: test, model: "pid_model:plain", devices: [mps], dtypes: [float32], checks: [forward]}
          - {id: w.b, source: test, intent: test, model: "pid_model:second", devices: [mps], dtypes: [float32], checks: [forward]}
          - {id: w.c, source: test, intent: test, model: "pid_model:crashing", devices: [mps], dtypes: [float32, bfloat16], checks: [forward]}
          - {id: w.d, source: test, intent: test, model: "pid_model:plain", devices: [mps], dtypes: [float32], checks: [forward]}
        """))
    proc, cases, _ = run(cli, tmp_path, matrix, "--import", package)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert [cases[i]["status"] for i in ("w.a/mps/float32", "w.b/mps/float32", "w.d/mps/float32")] == ["pass"] * 3, cases
    assert cases["w.c/mps/float32"]["status"] == "crash" and "signal 9" in cases["w.c/mps/float32"]["message"]
    assert cases["w.c/mps/bfloat16"]["status"] == "crash", "resumed at the next case, in a new worker that dies too"
    runs = [line.split() for line in pids.read_text().splitlines()]
    checked, ran = runs[:4], runs[4:]  # the check builds every factory in its own one-shot worker
    assert len({pid for _, pid in checked}) == 1 and [name for name, _ in checked] == ["plain", "second", "crashing", "plain"]
    assert [name for name, _ in ran] == ["plain", "second", "crashing", "crashing", "plain"], ran
    first, second, crash1, crash2, last = (pid for _, pid in ran)
    assert first == second == crash1, "one worker served the rows until it died"
    assert len({crash1, crash2, last}) == 3, "each death is followed by a new worker"
    assert checked[0][1] not in {first, crash2, last}, "the check's worker is not the run's"


def test_transformers_rows_pass_on_sims_cuda_mps_xpu_and_name_xlas_split_ties(cli, tmp_path):
    """matrices/models/models_transformers.yaml, in float32 (make report runs bfloat16 too), with sim's legitimate divergences on:
    GPT-2 and BERT agree on cuda, mps and xpu (their .to() keeps the ties); on xla the split ties are named with
    the remedy and expected (matrices/models/expectations/models/xla.yaml)."""
    pytest.importorskip("transformers")
    yaml = pytest.importorskip("yaml")
    # The file's rows in float32 only (make test's budget: bfloat16 runs in make report), its expectations beside.
    source = ROOT / "matrices" / "models"
    document = yaml.safe_load((source / "models_transformers.yaml").read_text())
    for row in document["cases"]:
        row["dtypes"] = ["float32"]
    matrix = tmp_path / "models_transformers.yaml"
    matrix.write_text(yaml.safe_dump(document))
    (tmp_path / "expectations" / "models").mkdir(parents=True)
    (tmp_path / "expectations" / "models" / "xla.yaml").write_text((source / "expectations" / "models" / "xla.yaml").read_text())
    bundle = tmp_path / "b.json"
    proc = cli("run", "--matrix", matrix, "--import", EXAMPLES,
               "--simulate", "cuda:2,mps,xpu,xla:1", "--out", bundle, env={**ENV, "CROSSDEV_SIM_DIVERGE": "all"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cases = {c["id"]: c for c in json.loads(bundle.read_text())["cases"]}
    assert len(cases) == 8
    for case_id, case in cases.items():
        kind = case_id.split("/")[1]
        assert case["execution"] == "simulated", case
        assert case["status"] == ("xfail" if kind == "xla" else "pass"), (case_id, case["message"])
        assert case["metrics"]["shared_parameters_compared"] >= 1
        assert case["metrics"]["shared_parameters_failing"] == (0 if kind != "xla" else case["metrics"]["shared_parameters_compared"])
    assert ("transformer.wte.weight and lm_head.weight are one parameter on the CPU and 2 on sim after .to(): "
            "call tie_weights() after moving") in cases["models.gpt2/xla/float32"]["message"]
    # compare_model from Python, with each row's arguments, gives the rows' verdicts (make xla runs this on the
    # real xla); a bundle whose verdict was changed is caught.
    agreement = [sys.executable, "-m", "crossdev.models.agreement", "--import-path", str(EXAMPLES), "--simulated"]
    env = {**os.environ, **ENV}
    gpt2_only = tmp_path / "gpt2.json"
    document = json.loads(bundle.read_text())  # a pass and an xfail
    document["cases"] = [c for c in document["cases"] if c["id"] in ("models.gpt2/cuda/float32", "models.gpt2/xla/float32")]
    gpt2_only.write_text(json.dumps(document))
    done = subprocess.run([*agreement, str(gpt2_only)], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0 and "2 of 2 models cases (real or simulated) agree" in done.stdout, done.stdout + done.stderr
    document["cases"][0]["status"] = "fail"
    gpt2_only.write_text(json.dumps(document))
    done = subprocess.run([*agreement, str(gpt2_only)], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "DISAGREES: models.gpt2/cuda/float32: row fail, compare_model pass" in done.stdout


def test_a_row_whose_package_is_absent_skips_with_the_reason(cli, tmp_path):
    matrix = tmp_path / "models_r.yaml"
    matrix.write_text(textwrap.dedent("""\
        suite: models
        cases:
          - {id: t.r, source: "issue 48", intent: "test", model: "no_such_package_xyz:build", requires: [no_such_package_xyz],
             devices: [mps], dtypes: [float32]}
        """))
    bundle = tmp_path / "b.json"
    proc = cli("run", "--matrix", matrix, "--simulate", "mps", "--out", bundle, env=ENV)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (case,) = json.loads(bundle.read_text())["cases"]
    assert case["status"] == "skip" and case["details"]["skip_reason"] == "package_absent", case
    assert case["message"].startswith("needs no_such_package_xyz, not installed in this Python")
